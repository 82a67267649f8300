/**
 * The process model of `rvm run --workers N` (vm/runtime/cluster.ts) on fake channels: no process
 * is forked. A fake worker is a pair of channel ends (what one sends reaches the other as JSON a
 * turn later, as Node's IPC does) and an exit the test decides; the primary's clock, signals and
 * exit are the test's too.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import {
  MAX_RESTARTS_PER_MINUTE,
  supervise,
  work,
  type Listening,
  type PrimaryHost,
  type WorkerHost,
  type WorkerProcess,
  type WorkerServing,
} from '../../../vm/runtime/cluster.js';
import { IpcStore, type IpcChannel, type PrimaryStore } from '../../../vm/runtime/stores/ipc.js';
import { StoreUnavailableError } from '../../../vm/runtime/stores/unavailable.js';

/** One end of a channel pair: what it sends is emitted on the other end, as JSON, in a later turn. */
class ChannelEnd extends EventEmitter implements IpcChannel {
  other!: ChannelEnd;
  connected = true;
  /** Everything sent from this end. */
  readonly sent: unknown[] = [];
  send(message: unknown, callback: (error: Error | null) => void): boolean {
    if (!this.connected) {
      setImmediate(() => callback(new Error('channel closed')));
      return false;
    }
    this.sent.push(message);
    const text = JSON.stringify(message);
    setImmediate(() => {
      if (this.other.connected) this.other.emit('message', JSON.parse(text));
      callback(null);
    });
    return true;
  }
  /** Closes both ends, each telling its side. */
  disconnect(): void {
    for (const end of [this, this.other]) {
      if (!end.connected) continue;
      end.connected = false;
      end.emit('disconnect');
    }
  }
}

/** A forked worker as the primary sees it, with the worker's own side (`host`) for `work`. */
class FakeWorker implements WorkerProcess {
  /** The primary's end of the channel. */
  readonly channel = new ChannelEnd();
  /** The worker's end. */
  readonly child = new ChannelEnd();
  readonly killed: string[] = [];
  exited: { code: number | null; signal: string | null } | null = null;
  private readonly exitListeners: ((code: number | null, signal: string | null) => void)[] = [];
  private readonly signalListeners: (() => void)[] = [];
  /** The worker process's side: its channel, its signals, its exit. */
  readonly host: WorkerHost = {
    channel: this.child,
    onSignal: (listener) => void this.signalListeners.push(listener),
    exit: (code) => this.exit(code),
  };

  constructor(
    readonly pid: number,
    readonly env: Record<string, string | undefined>,
  ) {
    this.channel.other = this.child;
    this.child.other = this.channel;
  }

  onExit(listener: (code: number | null, signal: string | null) => void): void {
    this.exitListeners.push(listener);
  }

  kill(signal: 'SIGTERM' | 'SIGKILL'): void {
    this.killed.push(signal);
  }

  /** Ends the worker: its channel closes, then the primary hears the exit. */
  exit(code: number | null, signal: string | null = null): void {
    if (this.exited !== null) return;
    this.exited = { code, signal };
    this.channel.disconnect();
    for (const listener of this.exitListeners.splice(0)) listener(code, signal);
  }

  /** A signal to the worker process (a terminal's Ctrl-C reaches every process of the group). */
  signal(): void {
    for (const listener of this.signalListeners) listener();
  }

  /** Tells the primary it listens, as `work` does. */
  listen(listening: Listening = LISTENING): void {
    this.child.send({ rvm: 'listening', listening }, () => {});
  }

  /** The cluster's messages the primary sent it (the store's replies left out). */
  fromPrimary(): unknown[] {
    return this.channel.sent.filter((m) => typeof m === 'object' && m !== null && 'rvm' in m);
  }
}

/** The primary's node:cluster and process, as the test drives them. */
class FakePrimary implements PrimaryHost {
  readonly workers: FakeWorker[] = [];
  readonly exits: number[] = [];
  readonly lines: string[] = [];
  readonly announced: Listening[] = [];
  time = 0;
  private readonly signalListeners: (() => void)[] = [];

  fork(env: Record<string, string | undefined>): FakeWorker {
    const w = new FakeWorker(100 + this.workers.length, env);
    this.workers.push(w);
    return w;
  }

  onSignal(listener: () => void): void {
    this.signalListeners.push(listener);
  }

  exit(code: number): void {
    this.exits.push(code);
  }

  now(): number {
    return this.time;
  }

  signal(): void {
    for (const listener of this.signalListeners) listener();
  }

  alive(): FakeWorker[] {
    return this.workers.filter((w) => w.exited === null);
  }
}

const LISTENING: Listening = {
  url: 'http://127.0.0.1:3000',
  reference: false,
  store: 'held by the primary',
  announced: [{ label: 'Database', text: 'sqlite' }],
};
const SHUTDOWN = { rvm: 'shutdown' };

/** Lets the channels deliver what is in flight (a message, its reply, the reply's callback). */
async function turns(n = 4): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** A supervisor of `workers` fake workers. */
function start(workers: number, env: Record<string, string | undefined> = { APP_SECRET: 'the-secret' }): { primary: FakePrimary; store: PrimaryStore } {
  const primary = new FakePrimary();
  const store = supervise(primary, {
    workers,
    env,
    appDir: null,
    announce: (listening) => void primary.announced.push(listening),
    log: (line) => void primary.lines.push(line),
  });
  return { primary, store };
}

/** Every live worker of `primary` tells it it listens. */
async function allListen(primary: FakePrimary): Promise<void> {
  for (const w of primary.alive()) w.listen();
  await turns();
}

describe('supervise: starting', () => {
  test('forks N workers, each with APP_SECRET over the environment; announces once, when every worker listens', async () => {
    const { primary, store } = start(3, { APP_SECRET: 'the-secret', KEEP: 'kept' });
    assert.equal(primary.workers.length, 3);
    for (const w of primary.workers) assert.deepEqual(w.env, { APP_SECRET: 'the-secret', KEEP: 'kept' });
    const [a, b, c] = primary.workers;
    a!.listen();
    b!.listen();
    await turns();
    assert.deepEqual(primary.announced, [], 'not before every worker listens');
    c!.listen({ ...LISTENING, url: 'http://127.0.0.1:3001' });
    await turns();
    assert.deepEqual(primary.announced, [{ ...LISTENING, url: 'http://127.0.0.1:3001' }], 'what the last one said');
    a!.exit(1);
    primary.workers[3]!.listen();
    await turns();
    assert.equal(primary.announced.length, 1, 'a replacement that listens is not announced again');
    assert.deepEqual(primary.exits, []);
    store.close();
  });

  test('a worker that crashed before the others listen is not counted: the start is announced once its replacement listens', async () => {
    const { primary, store } = start(2);
    const [a, b] = primary.workers;
    a!.listen();
    await turns();
    a!.exit(null, 'SIGKILL');
    b!.listen();
    await turns();
    assert.deepEqual(primary.announced, [], 'one of two listens');
    primary.workers[2]!.listen();
    await turns();
    assert.equal(primary.announced.length, 1);
    store.close();
  });

  test('without APP_SECRET a bundle gets one generated for every worker and every replacement', async () => {
    const { primary, store } = start(2, {});
    await allListen(primary);
    primary.workers[0]!.exit(1);
    const secrets = new Set(primary.workers.map((w) => w.env.APP_SECRET));
    assert.equal(primary.workers.length, 3);
    assert.equal(secrets.size, 1, [...secrets].join(', '));
    assert.match([...secrets][0]!, /^[\w-]{20,}$/);
    store.close();
  });

  test('a worker that fails to start stops the run: the others are shut down, none is forked, and the primary exits 1', async () => {
    const { primary } = start(3);
    const [a, b, c] = primary.workers;
    a!.listen();
    await turns();
    b!.exit(1);
    assert.deepEqual(primary.lines, ['a worker failed to start (code 1); stopping']);
    await turns();
    assert.deepEqual(a!.fromPrimary(), [SHUTDOWN]);
    assert.deepEqual(c!.fromPrimary(), [SHUTDOWN]);
    a!.exit(0);
    assert.deepEqual(primary.exits, [], 'not while a worker is still closing');
    c!.exit(0);
    assert.deepEqual(primary.exits, [1]);
    assert.equal(primary.workers.length, 3, 'no worker forked');
    assert.deepEqual(primary.announced, []);
  });
});

describe('supervise: restarts', () => {
  test('a worker that crashes after it listened is replaced, with the same environment', async () => {
    const { primary, store } = start(2);
    await allListen(primary);
    primary.workers[0]!.exit(1);
    primary.workers[1]!.exit(null, 'SIGKILL');
    assert.deepEqual(primary.lines, ['worker 100 exited (code 1); starting another', 'worker 101 exited (signal SIGKILL); starting another']);
    assert.equal(primary.alive().length, 2);
    assert.deepEqual(
      primary.alive().map((w) => w.env),
      [{ APP_SECRET: 'the-secret' }, { APP_SECRET: 'the-secret' }],
    );
    assert.deepEqual(primary.exits, []);
    store.close();
  });

  test(`more than MAX_RESTARTS_PER_MINUTE (${MAX_RESTARTS_PER_MINUTE}) crashes in a minute: it gives up, shuts the rest down and exits 1`, async () => {
    const { primary } = start(2);
    await allListen(primary);
    for (let i = 0; i < MAX_RESTARTS_PER_MINUTE; i++) {
      primary.time = i * 5_000;
      primary.alive()[0]!.exit(1);
      await allListen(primary);
    }
    assert.equal(primary.workers.length, 2 + MAX_RESTARTS_PER_MINUTE, 'each crash so far restarted');
    primary.time = 59_000;
    const [crashing, other] = primary.alive();
    crashing!.exit(1);
    assert.equal(primary.lines.at(-1), `workers keep crashing (${MAX_RESTARTS_PER_MINUTE + 1} in a minute); stopping`);
    assert.equal(primary.workers.length, 2 + MAX_RESTARTS_PER_MINUTE, 'no worker forked');
    await turns();
    assert.deepEqual(other!.fromPrimary(), [SHUTDOWN]);
    other!.exit(0);
    assert.deepEqual(primary.exits, [1]);
  });

  test('restarts older than a minute do not count', async () => {
    const { primary, store } = start(1);
    await allListen(primary);
    for (let i = 0; i < MAX_RESTARTS_PER_MINUTE; i++) {
      primary.alive()[0]!.exit(1);
      await allListen(primary);
    }
    primary.time = 60_001;
    primary.alive()[0]!.exit(1);
    assert.equal(primary.lines.at(-1), 'worker 110 exited (code 1); starting another');
    assert.equal(primary.alive().length, 1);
    assert.deepEqual(primary.exits, []);
    store.close();
  });
});

describe('supervise: signals', () => {
  test('a signal: one shutdown message to each worker, no restart as they exit, exit 0 once the last has', async () => {
    const { primary } = start(3);
    await allListen(primary);
    primary.signal();
    await turns();
    for (const w of primary.workers) assert.deepEqual(w.fromPrimary(), [SHUTDOWN]);
    primary.workers[0]!.exit(0);
    primary.workers[1]!.exit(1);
    assert.deepEqual(primary.exits, []);
    primary.workers[2]!.exit(0);
    assert.deepEqual(primary.exits, [0]);
    assert.equal(primary.workers.length, 3, 'no worker forked');
    assert.deepEqual(primary.lines, []);
  });

  test('a second signal stops waiting: every worker left is killed and the primary exits 1', async () => {
    const { primary } = start(2);
    await allListen(primary);
    primary.signal();
    primary.workers[0]!.exit(0);
    primary.signal();
    assert.deepEqual(primary.workers[0]!.killed, []);
    assert.deepEqual(primary.workers[1]!.killed, ['SIGKILL']);
    assert.deepEqual(primary.exits, [1]);
  });

  test('a worker the shutdown message cannot reach is sent SIGTERM', async () => {
    const { primary } = start(2);
    await allListen(primary);
    const [reachable, unreachable] = primary.workers;
    unreachable!.channel.disconnect();
    primary.signal();
    await turns();
    assert.deepEqual(unreachable!.killed, ['SIGTERM']);
    assert.deepEqual(reachable!.killed, []);
    assert.deepEqual(reachable!.fromPrimary(), [SHUTDOWN]);
  });
});

describe("supervise: the primary's store", () => {
  test('every worker reaches one state, which outlives a worker; a dead worker is no longer answered', async () => {
    const { primary, store } = start(2);
    await allListen(primary);
    const [a, b] = primary.workers;
    const fromA = new IpcStore(a!.child);
    const fromB = new IpcStore(b!.child);
    assert.equal((await fromA.hit('login', 3, 60_000)).remaining, 2);
    assert.equal((await fromB.hit('login', 3, 60_000)).remaining, 1, 'one window for both');
    a!.exit(null, 'SIGKILL');
    await assert.rejects(fromA.get('k'), StoreUnavailableError);
    const fromReplacement = new IpcStore(primary.workers[2]!.child);
    assert.equal((await fromReplacement.peek('login', 3, 60_000)).remaining, 1, 'the replacement finds the count');
    assert.equal(store.state.peek('login', 3, 60_000, Date.now()).remaining, 1, 'held by the primary');
    for (const s of [fromA, fromB, fromReplacement]) s.close();
    store.close();
  });
});

describe('work', () => {
  /** Runs `work` on `w` with a server whose closes are counted. */
  async function serving(w: FakeWorker, close: () => Promise<void> = async () => {}): Promise<{ closes: () => number; store: IpcStore }> {
    let closes = 0;
    let store: IpcStore | undefined;
    await work(w.host, async (openStore) => {
      store = openStore(() => {}) as IpcStore;
      return {
        listening: LISTENING,
        close: () => {
          closes++;
          return close();
        },
      } satisfies WorkerServing;
    });
    return { closes: () => closes, store: store! };
  }

  test('serves with the primary’s store, tells the primary once it listens, and closes once on its word', async () => {
    const { primary, store: shared } = start(1);
    const w = primary.workers[0]!;
    const { closes, store } = await serving(w);
    assert.ok(store instanceof IpcStore);
    await store.set('k', 'v');
    assert.equal(shared.state.get('k'), 'v', 'set through the channel, in the primary');
    await turns();
    assert.deepEqual(primary.announced, [LISTENING]);
    primary.signal();
    await turns();
    assert.equal(closes(), 1);
    assert.deepEqual(w.exited, { code: 0, signal: null });
    assert.deepEqual(primary.exits, [0], 'the primary exits once its worker has');
    w.signal();
    assert.equal(closes(), 1, 'a signal after the shutdown does not close again');
  });

  test('a signal, the primary’s word and the loss of the primary: one close, whichever comes first', async () => {
    for (const first of ['signal', 'disconnect'] as const) {
      const { primary, store } = start(1);
      const w = primary.workers[0]!;
      const { closes } = await serving(w);
      if (first === 'signal') w.signal();
      else w.channel.disconnect();
      primary.signal();
      await turns();
      w.signal();
      assert.equal(closes(), 1, first);
      assert.deepEqual(w.exited, { code: 0, signal: null }, first);
      store.close();
    }
  });

  test('a close that fails exits 1', async () => {
    const { primary } = start(1);
    const w = primary.workers[0]!;
    await serving(w, () => Promise.reject(new Error('stuck')));
    primary.signal();
    await turns();
    assert.deepEqual(w.exited, { code: 1, signal: null });
  });

  test('a serve that fails rejects and says nothing to the primary: the primary stops the run', async () => {
    const { primary } = start(1);
    const w = primary.workers[0]!;
    await assert.rejects(
      work(w.host, () => Promise.reject(new Error('port in use'))),
      /port in use/,
    );
    assert.deepEqual(w.child.sent, []);
    w.exit(1);
    assert.deepEqual(primary.lines, ['a worker failed to start (code 1); stopping']);
    assert.deepEqual(primary.exits, [1]);
  });
});
