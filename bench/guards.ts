/**
 * What guards cost on the hot path: GET /guarded (guard auth + guard rate_limit) against the same
 * route unguarded (GET /open), both from one `rvm run --prod` (bench/apps/guarded), the same bearer
 * token on every request. Each round runs the two routes back to back, in alternating order; the
 * ratio is the median of the per-round ratios, as in http.ts (a burst of noise on the shared
 * machine spoils a round, not the result; three rounds of 8 s gave 0.76–0.82× for one build).
 * Target: the guarded route reaches ≥ 0.8× the unguarded req/s. Env: BENCH_DURATION (s per route
 * per round, default 2), BENCH_ROUNDS (default 12), BENCH_CONNECTIONS (default 64), BENCH_PIPELINING (requests in flight
 * per connection, default 10: without pipelining the load generator, not the server, sets the
 * rate on a 2-core machine, see http.ts). Always exits 0.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { SignJWT } from 'jose';
import { REPO_ROOT, fmt, formatTable, freePort, machineDescription, median, pairedRatio, pinning, waitForServer } from './util.js';

const DURATION = Number(process.env.BENCH_DURATION) || 2;
const ROUNDS = Math.max(1, Math.floor(Number(process.env.BENCH_ROUNDS) || 12));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS) || 64;
const PIPELINING = Number(process.env.BENCH_PIPELINING) || 10;
/** The signing key of the run: random, never a committed secret. */
const JWT_SECRET = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');

const port = await freePort();
const pin = pinning();
const child = spawn(
  pin.command,
  [...pin.prefix, join(REPO_ROOT, 'dist/tools/cli.js'), 'run', join(REPO_ROOT, 'bench/apps/guarded'), '--prod', '--port', String(port)],
  {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, JWT_SECRET },
  },
);
const base = `http://127.0.0.1:${port}`;
try {
  await waitForServer(`${base}/open`, 15_000, () => child.exitCode === null);
  const token = await new SignJWT({ sub: 'bench' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime('2h')
    .sign(new TextEncoder().encode(JWT_SECRET));
  const headers = { authorization: `Bearer ${token}` };
  const check = await fetch(`${base}/guarded`, { headers });
  if (check.status !== 200) throw new Error(`GET /guarded answered ${check.status}: ${await check.text()}`);
  const run = async (path: string, duration: number) =>
    (await autocannon({ url: base + path, connections: CONNECTIONS, pipelining: PIPELINING, duration, headers })).requests.average;
  await run('/open', 2);
  await run('/guarded', 2);
  const results: Record<string, number[]> = { '/open': [], '/guarded': [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const path of round % 2 === 0 ? ['/open', '/guarded'] : ['/guarded', '/open']) results[path]!.push(await run(path, DURATION));
  }
  const open = median(results['/open']!);
  const guarded = median(results['/guarded']!);
  const { ratio, range } = pairedRatio(results['/guarded']!, results['/open']!)!;
  console.log(
    `Guards on the hot path — ${machineDescription()}, ${ROUNDS} rounds of ${DURATION} s per route, ${CONNECTIONS} connections with ${PIPELINING} requests in flight each; ${pin.note}\n`,
  );
  console.log(
    formatTable(
      ['route', 'req/s (median)', 'ratio (median of rounds)'],
      [
        ['GET /open (no guard)', fmt(open), '1.00'],
        ['GET /guarded (auth + rate_limit)', fmt(guarded), ratio.toFixed(3)],
      ],
    ),
  );
  console.log(`\n${ratio >= 0.8 ? 'PASS' : 'MISS'}  guarded ≥ 0.8× unguarded req/s (${ratio.toFixed(3)}×, ${range})`);
} finally {
  child.kill('SIGTERM');
}
