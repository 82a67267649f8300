/**
 * The primary-held store with real processes: forked workers racing on one primary (exact windows,
 * one compare-and-set winner, a worker killed under load), the key/value semantics of the
 * in-process store seen through a channel, and the timeouts of a primary that never answers.
 */
import { test, describe, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import cluster from 'node:cluster';
import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import { IPC_COMMAND_TIMEOUT_MS, IpcStore, PrimaryStore, type IpcChannel } from '../../../../vm/runtime/stores/ipc.js';
import { STORE_OPS, type StoreReplies, type StoreRequests } from '../../../../vm/runtime/stores/ipc-codec.js';
import { StoreUnavailableError } from '../../../../vm/runtime/stores/unavailable.js';
import { RvmError } from '../../../../vm/values.js';
import type { KeyValueStore } from '../../../../vm/host/stores.js';

// Checked by the compiler: a worker's IpcStore stands wherever the store contract is expected.
const asStore = (s: IpcStore): KeyValueStore => s;

const WORKER = fileURLToPath(new URL('../../../support/ipc-store-worker.js', import.meta.url));
const PRIMARY = fileURLToPath(new URL('../../../support/ipc-store-primary.js', import.meta.url));

const children = new Set<ChildProcess>();
after(() => {
  for (const c of children) c.kill('SIGKILL');
});

/** The next `{ harness: true, done }` message of `child`. */
function answer<T = Record<string, unknown>>(child: ChildProcess, done: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: { harness?: unknown; done?: string }): void => {
      if (m?.harness !== true || m.done !== done) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(m as T);
    };
    const onExit = (code: number | null): void => reject(new Error(`worker exited (${code}) before ${done}`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** `n` forked workers attached to `primary`, each ready. */
async function workers(primary: PrimaryStore, n: number): Promise<ChildProcess[]> {
  const started = Array.from({ length: n }, () => {
    const child = fork(WORKER, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.add(child);
    child.on('exit', () => children.delete(child));
    primary.attach(child as unknown as IpcChannel);
    return answer(child, 'ready').then(() => child);
  });
  return Promise.all(started);
}

async function stop(all: ChildProcess[]): Promise<void> {
  await Promise.all(
    all.map((c) =>
      c.exitCode !== null || c.signalCode !== null
        ? undefined
        : new Promise((r) => {
            c.once('exit', r);
            c.disconnect();
          }),
    ),
  );
}

describe('primary-held store: workers racing on one primary', () => {
  // One primary and its four workers for every test here, each test on keys of its own: a fork
  // costs more than the test it serves.
  const primary = new PrimaryStore();
  let four: ChildProcess[] = [];
  before(async () => {
    four = await workers(primary, 4);
  });
  after(async () => {
    await stop(four);
    primary.close();
  });

  test('4 workers, 400 concurrent hits, limit 100 per 60 s → exactly 100 allowed (5 rounds)', async () => {
    for (let round = 0; round < 5; round++) {
      const key = `login:${round}`;
      const replies = four.map((c) => answer<{ allowed: number }>(c, 'hits'));
      for (const c of four) c.send({ cmd: 'hits', key, n: 100, limit: 100, windowMs: 60_000 });
      const allowed = (await Promise.all(replies)).map((r) => r.allowed);
      assert.equal(
        allowed.reduce((a, b) => a + b, 0),
        100,
        `round ${round}: ${allowed.join(' + ')}`,
      );
      assert.deepEqual(primary.state.peek(key, 100, 60_000, Date.now()).remaining, 0);
    }
  });

  test('compareAndSet of one key from 4 workers at once → exactly one winner, 50 times', async () => {
    const keys = Array.from({ length: 50 }, (_, i) => `totp-step:${i}`);
    const replies = four.map((c) => answer<{ won: string[] }>(c, 'cas'));
    four.forEach((c, i) => c.send({ cmd: 'cas', keys, me: `w${i}` }));
    const won = (await Promise.all(replies)).map((r) => r.won);
    for (const key of keys) {
      const winners = won.map((w, i) => (w.includes(key) ? `w${i}` : null)).filter((w) => w !== null);
      assert.equal(winners.length, 1, `${key}: ${winners.join(', ')}`);
      assert.equal(primary.state.get(key), winners[0], 'the stored value is the winner’s');
    }
  });

  test('read-then-compareAndSet increments from 4 workers lose no update', async () => {
    const replies = four.map((c) => answer<{ retries: number }>(c, 'increment'));
    for (const c of four) c.send({ cmd: 'increment', key: 'counter', times: 50 });
    const retries = (await Promise.all(replies)).reduce((a, r) => a + r.retries, 0);
    assert.equal(primary.state.get('counter'), 200, `${retries} retries`);
  });

  test('a worker killed mid-load: the primary keeps its count, the others stay exact, a new worker sees it', async () => {
    const [victim, ...others] = four;
    const key = 'otp:+33600000000';
    const first = answer<{ allowed: number }>(victim!, 'hits');
    victim!.send({ cmd: 'hits', key, n: 30, limit: 100, windowMs: 60_000 });
    assert.equal((await first).allowed, 30);
    // The three others are hitting the key when the victim dies.
    const started = others.map((c) => answer(c, 'load-started'));
    for (const c of others) c.send({ cmd: 'load', key, limit: 100, windowMs: 60_000, inFlight: 10 });
    await Promise.all(started);
    const died = new Promise((r) => victim!.once('exit', r));
    victim!.kill('SIGKILL');
    await died;
    await new Promise((r) => setTimeout(r, 50));
    const stopped = others.map((c) => answer<{ allowed: number }>(c, 'stop'));
    for (const c of others) c.send({ cmd: 'stop' });
    const allowed = (await Promise.all(stopped)).reduce((a, r) => a + r.allowed, 0);
    assert.equal(allowed, 70, 'the victim’s 30 still count');
    // A restarted worker finds the same state.
    const [fresh] = await workers(primary, 1);
    const again = answer<{ allowed: number }>(fresh!, 'hits');
    fresh!.send({ cmd: 'hits', key, n: 5, limit: 100, windowMs: 60_000 });
    assert.equal((await again).allowed, 0);
    await stop([fresh!]);
  });
});

test('with node:cluster workers, as `rvm run --workers` forks them: 400 hits → exactly 100', async () => {
  const primary = new PrimaryStore();
  cluster.setupPrimary({ exec: WORKER, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const four = Array.from({ length: 4 }, () => {
    const w = cluster.fork();
    primary.attach(w);
    return w;
  });
  const next = (w: (typeof four)[number], done: string): Promise<{ allowed: number }> =>
    new Promise((resolve) => {
      const on = (m: { harness?: unknown; done?: string; allowed: number }): void => {
        if (m?.harness !== true || m.done !== done) return;
        w.off('message', on);
        resolve(m);
      };
      w.on('message', on);
    });
  await Promise.all(four.map((w) => next(w, 'ready')));
  const replies = four.map((w) => next(w, 'hits'));
  for (const w of four) w.send({ cmd: 'hits', key: 'cluster', n: 100, limit: 100, windowMs: 60_000 });
  const allowed = (await Promise.all(replies)).map((r) => r.allowed);
  assert.equal(
    allowed.reduce((a, b) => a + b, 0),
    100,
    allowed.join(' + '),
  );
  await Promise.all(
    four.map(
      (w) =>
        new Promise((r) => {
          w.once('exit', r);
          w.disconnect();
        }),
    ),
  );
  primary.close();
});

describe('primary-held store: key/value semantics through the channel', () => {
  /** A forked primary on a clock the test sets, and an IpcStore in this process talking to it. */
  async function remote(): Promise<{ store: IpcStore; clock(t: number): void; child: ChildProcess }> {
    const child = fork(PRIMARY, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.add(child);
    await new Promise<void>((resolve) => child.once('message', () => resolve()));
    return { store: new IpcStore(child as unknown as IpcChannel), clock: (t) => void child.send({ harness: 'clock', t }), child };
  }
  const close = async (r: { store: IpcStore; child: ChildProcess }): Promise<void> => {
    r.store.close();
    const exited = new Promise((resolve) => r.child.once('exit', resolve));
    r.child.disconnect();
    await exited;
  };
  // One primary for the tests that leave it running, each on keys of its own and setting the clock it needs.
  let r: Awaited<ReturnType<typeof remote>>;
  before(async () => {
    r = await remote();
  });
  after(() => close(r));

  test('get, set, delete; structured values come back equal', async () => {
    const { store: s } = r;
    assert.equal(await s.get('a'), undefined);
    await s.set('a', { n: 1, list: [1, 'two', null, { deep: true }] });
    assert.deepEqual(await s.get('a'), { n: 1, list: [1, 'two', null, { deep: true }] });
    await s.set('nothing', null);
    assert.equal(await s.get('nothing'), null, 'null is a value, not absence');
    await s.delete('a');
    assert.equal(await s.get('a'), undefined);
  });

  test('TTL on the primary’s clock: present before, gone at expiry', async () => {
    r.clock(1_000);
    await r.store.set('ttl', 'v', 500);
    r.clock(1_499);
    assert.equal(await r.store.get('ttl'), 'v');
    r.clock(1_500);
    assert.equal(await r.store.get('ttl'), undefined);
  });

  test('an invalid ttl → the primary’s invalid_ttl, as an RvmError', async () => {
    for (const ttl of [0, -1]) {
      await assert.rejects(r.store.set('invalid', 1, ttl), (e: unknown) => e instanceof RvmError && e.code === 'invalid_ttl');
    }
    assert.equal(await r.store.get('invalid'), undefined);
  });

  test('compareAndSet swaps only an unchanged value, compared as JSON; undefined means absent', async () => {
    const s = r.store;
    r.clock(1_000);
    assert.equal(await s.compareAndSet('step', undefined, 10, 100), true, 'absent → set');
    assert.equal(await s.compareAndSet('step', undefined, 11), false, 'present: an absent expectation loses');
    assert.equal(await s.compareAndSet('step', 9, 11), false, 'another value loses');
    assert.equal(await s.get('step'), 10);
    assert.equal(await s.compareAndSet('nul', undefined, null), true, 'null is stored');
    assert.equal(await s.compareAndSet('nul', undefined, 1), false, 'and is not absence');
    assert.equal(await s.compareAndSet('nul', null, 1), true);
    assert.equal(await s.compareAndSet('code', undefined, { hmac: 'x', tries: 0 }), true);
    assert.equal(await s.compareAndSet('code', { hmac: 'x', tries: 0 }, { hmac: 'x', tries: 1 }), true, 'equal as JSON, a different object');
    assert.equal(await s.compareAndSet('code', { hmac: 'x', tries: 0 }, { hmac: 'x', tries: 2 }), false, 'the old value is stale');
    assert.equal(await s.compareAndSet('code', { hmac: 'x', tries: 1 }, undefined), true, 'undefined next removes');
    assert.equal(await s.get('code'), undefined);
    r.clock(1_100);
    assert.equal(await s.compareAndSet('step', undefined, 12), true, 'an expired key is absent');
    assert.equal(await s.get('step'), 12);
  });

  test('windows: remaining counts down, refusals are not counted, reset forgets (primary’s clock)', async () => {
    const s = r.store;
    r.clock(10_000);
    assert.deepEqual(await s.hit('k', 2, 1_000, 0), { allowed: true, remaining: 1, resetAt: 11_000 }, 'the caller’s now is ignored');
    r.clock(10_500);
    assert.deepEqual(await s.hit('k', 2, 1_000), { allowed: true, remaining: 0, resetAt: 11_000 });
    r.clock(10_999);
    assert.deepEqual(await s.hit('k', 2, 1_000), { allowed: false, remaining: 0, resetAt: 11_000 });
    assert.deepEqual(await s.peek('k', 2, 1_000), { allowed: false, remaining: 0, resetAt: 11_000 });
    r.clock(11_000);
    assert.deepEqual(await s.hit('k', 2, 1_000), { allowed: true, remaining: 0, resetAt: 11_500 });
    await s.reset('k');
    assert.deepEqual(await s.peek('k', 2, 1_000), { allowed: true, remaining: 2, resetAt: 11_000 });
  });

  test('a primary that exits: waiting requests and later ones fail store_unavailable at once', async () => {
    const own = await remote();
    const s = own.store;
    assert.equal(await s.compareAndSet('k', undefined, 1), true);
    const exited = new Promise((resolve) => own.child.once('exit', resolve));
    const waiting = s.get('k');
    own.child.kill('SIGKILL');
    const t0 = Date.now();
    await assert.rejects(waiting, (e: unknown) => e instanceof StoreUnavailableError && e.code === 'store_unavailable');
    await exited;
    await assert.rejects(s.get('k'), (e: unknown) => e instanceof StoreUnavailableError && e.code === 'store_unavailable');
    assert.ok(Date.now() - t0 < IPC_COMMAND_TIMEOUT_MS / 2, `took ${Date.now() - t0} ms`);
    s.close();
  });
});

/** A channel to a primary that never answers (hung), or answers after `delayMs`. */
function slowChannel(delayMs: number | null): IpcChannel & EventEmitter {
  const primary = new PrimaryStore();
  const channel = Object.assign(new EventEmitter(), {
    connected: true,
    send(message: unknown, callback: (error: Error | null) => void) {
      callback(null);
      if (delayMs === null) return;
      const reply = primary.answerAll(message as StoreRequests);
      setTimeout(() => channel.emit('message', JSON.parse(JSON.stringify(reply))), delayMs);
    },
  });
  return channel;
}

describe('primary-held store: timeouts', () => {
  test(`a primary that never answers → store_unavailable after IPC_COMMAND_TIMEOUT_MS (${IPC_COMMAND_TIMEOUT_MS} ms), not before`, async () => {
    const s = new IpcStore(slowChannel(null));
    const t0 = performance.now();
    await assert.rejects(s.hit('k', 5, 60_000), (e: unknown) => e instanceof StoreUnavailableError && e.code === 'store_unavailable');
    const took = performance.now() - t0;
    assert.ok(took >= IPC_COMMAND_TIMEOUT_MS - 2 && took < IPC_COMMAND_TIMEOUT_MS + 200, `took ${took} ms`);
    assert.equal(s.inFlight, 0, 'the timed-out request is forgotten');
    s.close();
  });

  test('at the limit: an answer inside the timeout is taken, one after it fails and is then ignored', async () => {
    const inTime = new IpcStore(slowChannel(40), { timeoutMs: 120 });
    await inTime.set('k', 1);
    assert.deepEqual(await inTime.hit('k', 1, 1_000), { allowed: true, remaining: 0, resetAt: (await inTime.peek('k', 1, 1_000)).resetAt });
    inTime.close();
    const late = new IpcStore(slowChannel(200), { timeoutMs: 120 });
    await assert.rejects(late.get('k'), (e: unknown) => e instanceof StoreUnavailableError);
    await new Promise((r) => setTimeout(r, 150)); // the late reply arrives and finds nobody waiting
    assert.equal(late.inFlight, 0);
    late.close();
  });

  test('a closed channel fails at once, without waiting for the timeout', async () => {
    const channel = slowChannel(null);
    (channel as { connected: boolean }).connected = false;
    const s = new IpcStore(channel);
    const t0 = performance.now();
    await assert.rejects(s.compareAndSet('k', undefined, 1), (e: unknown) => e instanceof StoreUnavailableError);
    assert.ok(performance.now() - t0 < 50);
    s.close();
  });

  test('a process without a channel (not a worker) fails at once', async () => {
    const s = new IpcStore(Object.assign(new EventEmitter(), { send: undefined }) as unknown as IpcChannel);
    const kv = asStore(s);
    await assert.rejects(
      Promise.resolve().then(() => kv.get('k')),
      (e: unknown) => e instanceof StoreUnavailableError,
    );
    await assert.rejects(
      Promise.resolve().then(() => kv.hit('k', 1, 1_000, 0)),
      (e: unknown) => e instanceof StoreUnavailableError,
    );
    s.close();
  });

  test('the primary ignores messages that are not its own, answers a batch in one message, and an unknown operation with an error that ends the batch', () => {
    const primary = new PrimaryStore();
    const sent: unknown[] = [];
    const channel = Object.assign(new EventEmitter(), { connected: true, send: (m: unknown) => void sent.push(m) });
    primary.attach(channel);
    const op = (name: (typeof STORE_OPS)[number]): number => STORE_OPS.indexOf(name);
    channel.emit('message', { rvm: 'listening', url: 'http://127.0.0.1:1' });
    channel.emit('message', { rvmStore: 2, batch: 1, requests: [op('get'), 'k'] });
    channel.emit('message', { rvmStore: 1, requests: [op('get'), 'k'] });
    assert.deepEqual(sent, []);
    channel.emit('message', { rvmStore: 1, batch: 5, requests: [op('set'), 'k', [1], false, op('get'), 'k', op('get'), 7, 99, 'k', op('get'), 'k'] });
    assert.equal(sent.length, 1, 'one reply message for the batch');
    const { batch, replies } = sent[0] as StoreReplies;
    assert.equal(batch, 5, 'the reply names its batch');
    assert.deepEqual(replies.slice(0, 3), [0, 1, 1], 'set answered undefined, get its value');
    assert.deepEqual([replies[3], replies[5]], [3, null], 'a get without a key string fails alone');
    assert.match(String(replies[4]), /without a key/);
    assert.equal(replies[6], 3, 'the unknown operation fails');
    assert.match(String(replies[7]), /unknown store operation 99/);
    assert.equal(replies.length, 9, 'and nothing after it is answered');
    // An operation's number as text is not an operation (it would read STORE_OP_CODECS['1'] and leave no reply).
    channel.emit('message', { rvmStore: 1, batch: 6, requests: [String(op('set')), 'k', [2], false, op('get'), 'k'] });
    const second = sent[1] as StoreReplies;
    assert.equal(second.batch, 6);
    assert.equal(second.replies[0], 3);
    assert.match(String(second.replies[1]), /unknown store operation "1"/);
    assert.equal(second.replies.length, 3, 'the batch ends there');
    assert.equal(primary.state.get('k'), 1, 'and the set did not run');
    // A value that is not boxed is refused, not read as undefined (which compareAndSet takes as "absent").
    channel.emit('message', { rvmStore: 1, batch: 7, requests: [op('compareAndSet'), 'k', 1, [3], false] });
    assert.deepEqual((sent[2] as StoreReplies).replies, [3, 'store request with a value that is not boxed', null]);
    assert.equal(primary.state.get('k'), 1);
    primary.close();
  });

  test('a worker fails the requests its primary left unanswered, and resolves the rest', async () => {
    const channel = Object.assign(new EventEmitter(), {
      connected: true,
      send(message: unknown, callback: (error: Error | null) => void) {
        callback(null);
        const { batch } = message as StoreRequests;
        // Two requests sent, one answered (as a primary that stopped at an unknown operation).
        setImmediate(() => channel.emit('message', { rvmStore: 1, batch, replies: [1, 'v'] } satisfies StoreReplies));
      },
    });
    const s = new IpcStore(channel);
    const [first, second] = await Promise.allSettled([s.get('a'), s.get('b')]);
    assert.deepEqual(first, { status: 'fulfilled', value: 'v' });
    assert.equal(second.status, 'rejected');
    assert.match(String((second as PromiseRejectedResult).reason.message), /did not answer/);
    assert.ok((second as PromiseRejectedResult).reason instanceof StoreUnavailableError, 'answered 503 store_unavailable, as any store that does not answer');
    assert.equal(s.inFlight, 0);
    s.close();
  });
});
