/**
 * What the TOTP second factor costs. Per call (tinybench): totp_verify through the
 * registered native on a fake context with the in-process store — a wrong code, for a secret
 * verified lately (its window's codes kept; counted: a store read and a compareAndSet, the count
 * cleared before it locks) and for one not seen lately (three time steps computed), a try refused
 * because the secret is locked out, and an accepted one (a step later than the last each call, so
 * the compareAndSet of the replay mark runs) — and otplib's own `verifySync` for comparison. Over
 * HTTP (autocannon, as bench/guards.ts): GET /totp, a route that calls totp_verify with a wrong
 * code (after the first five, the secret is locked out: the path a brute force meets), against GET /open, the same route without it, from one `rvm run --prod`
 * (bench/apps/second-factor), rounds alternating, one secret throughout; target ≥ 0.8× req/s. Env: BENCH_TIME (ms per
 * tinybench task, default 1000), BENCH_DURATION, BENCH_ROUNDS, BENCH_CONNECTIONS,
 * BENCH_PIPELINING as in guards.ts. Always exits 0.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { verifySync } from 'otplib';
import { Bench } from 'tinybench';
import { fakeContext, loadForTest } from '../plugins/testing.js';
import { auth } from '../stdlib/auth/index.js';
import { decodeBase32Secret, hotp } from '../stdlib/auth/one-time-password.js';
import { MAX_WRONG_CODES } from '../stdlib/auth/attempts.js';
import { TOTP_RECENT_SECRETS, newTotpSecret, replayMarkKey, verifyTotp } from '../stdlib/auth/totp.js';
import { createInProcessStore } from '../vm/runtime/stores/memory.js';
import { REPO_ROOT, fmt, formatTable, freePort, machineDescription, median, pairedRatio, pinning, waitForServer } from './util.js';

const TASK_TIME_MS = Number(process.env.BENCH_TIME) > 0 ? Number(process.env.BENCH_TIME) : 1000;
const DURATION = Number(process.env.BENCH_DURATION) || 2;
const ROUNDS = Math.max(1, Math.floor(Number(process.env.BENCH_ROUNDS) || 12));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS) || 64;
const PIPELINING = Number(process.env.BENCH_PIPELINING) || 10;
const SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
/** A code that is not the secret's at any step near now (checked below). */
const WRONG_CODE = '000000';
/** Accepted codes precomputed, one per step: the accepted task walks through them, then starts over on a fresh store. */
const ACCEPTED_STEPS = 50_000;

async function perCall(): Promise<void> {
  const kit = await loadForTest([auth]);
  const ctx = fakeContext();
  const key = decodeBase32Secret(SECRET)!;
  const firstStep = Math.floor(Date.now() / 30_000);
  const codes = Array.from({ length: ACCEPTED_STEPS }, (_, i) => hotp(key, firstStep + i, 6));
  let i = 0;
  let store = createInProcessStore();
  if (await kit.callIn(ctx, 'totp_verify', WRONG_CODE, SECRET)) throw new Error('the wrong code is right by chance: pick another');
  // More secrets than the recent ones kept, cycled: each call computes its codes afresh.
  const coldSecrets = Array.from({ length: 4 * TOTP_RECENT_SECRETS }, () => newTotpSecret());
  let cold = 0;

  // Wrong codes are counted (MAX_WRONG_CODES lock the secret out): the count is cleared before it
  // locks, so the judged path (a store read and a compareAndSet) is what the first task measures.
  const stateKey = replayMarkKey(key);
  let wrong = 0;
  const lockedCtx = fakeContext();
  for (let n = 0; n < MAX_WRONG_CODES; n++) await kit.callIn(lockedCtx, 'totp_verify', WRONG_CODE, SECRET);

  const bench = new Bench({ time: TASK_TIME_MS });
  bench
    .add('totp_verify native, wrong code (a secret verified lately)', async () => {
      if (++wrong === MAX_WRONG_CODES) {
        wrong = 1;
        await ctx.store.delete(stateKey);
      }
      await kit.callIn(ctx, 'totp_verify', WRONG_CODE, SECRET);
    })
    .add('totp_verify native, refused (the secret locked out: 429)', async () => {
      await kit.callIn(fakeContext({ store: lockedCtx.store }), 'totp_verify', WRONG_CODE, SECRET);
    })
    .add('totp_verify native, wrong code (a secret not seen lately)', async () => {
      await kit.callIn(ctx, 'totp_verify', WRONG_CODE, coldSecrets[cold++ % coldSecrets.length]!);
    })
    .add('verifyTotp, accepted (replay mark written)', async () => {
      if (i === ACCEPTED_STEPS) {
        i = 0;
        store = createInProcessStore();
      }
      const step = firstStep + i;
      if ((await verifyTotp(store, codes[i++]!, SECRET, step * 30_000 + 15_000)) !== true) throw new Error('an accepted code was refused');
    })
    .add('otplib verifySync, wrong code (no store)', () => {
      try {
        verifySync({ secret: SECRET, token: WRONG_CODE, epochTolerance: 30 });
      } catch {
        // A malformed token throws; this one is well formed.
      }
    });
  await bench.run();
  const rows = bench.tasks.map((t) => {
    const r = t.result;
    if (r.state !== 'completed') return [t.name, '-', '-', r.state];
    return [t.name, fmt(r.throughput.mean), `${(r.latency.mean * 1000).toFixed(2)} µs`, `±${r.latency.rme.toFixed(1)}%`];
  });
  console.log(`TOTP per call — ${machineDescription()}\n`);
  console.log(formatTable(['task', 'calls/s', 'per call', 'rme'], rows));
}

async function overHttp(): Promise<void> {
  const port = await freePort();
  const pin = pinning();
  const child = spawn(
    pin.command,
    [...pin.prefix, join(REPO_ROOT, 'dist/tools/cli.js'), 'run', join(REPO_ROOT, 'bench/apps/second-factor'), '--prod', '--port', String(port)],
    {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const base = `http://127.0.0.1:${port}`;
  const headers = { 'x-totp-code': WRONG_CODE };
  try {
    await waitForServer(`${base}/open`, 15_000, () => child.exitCode === null);
    const check = await fetch(`${base}/totp`, { headers });
    if (check.status !== 200) throw new Error(`GET /totp answered ${check.status}: ${await check.text()}`);
    // From the MAX_WRONG_CODES-th wrong code on, the secret is locked out: GET /totp then measures
    // the refusal (a store read, 429 too_many_attempts), the path a brute force meets.
    const run = async (path: string, duration: number) =>
      (await autocannon({ url: base + path, connections: CONNECTIONS, pipelining: PIPELINING, duration, headers })).requests.average;
    await run('/open', 2);
    await run('/totp', 2);
    const results: Record<string, number[]> = { '/open': [], '/totp': [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const path of round % 2 === 0 ? ['/open', '/totp'] : ['/totp', '/open']) results[path]!.push(await run(path, DURATION));
    }
    const { ratio, range } = pairedRatio(results['/totp']!, results['/open']!)!;
    console.log(
      `\nTOTP on the hot path — ${ROUNDS} rounds of ${DURATION} s per route, ${CONNECTIONS} connections with ${PIPELINING} requests in flight each; ${pin.note}\n`,
    );
    console.log(
      formatTable(
        ['route', 'req/s (median)', 'ratio (median of rounds)'],
        [
          ['GET /open (reads the code, no second factor)', fmt(median(results['/open']!)), '1.00'],
          ['GET /totp (totp_verify, wrong code: locked out, 429)', fmt(median(results['/totp']!)), ratio.toFixed(3)],
        ],
      ),
    );
    console.log(`\n${ratio >= 0.8 ? 'PASS' : 'MISS'}  totp route ≥ 0.8× the route without it (${ratio.toFixed(3)}×, ${range})`);
  } finally {
    child.kill('SIGTERM');
  }
}

await perCall();
await overHttp();
