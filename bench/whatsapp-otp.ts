/**
 * Per-call cost of `whatsapp_verify_otp` (tinybench): the native as an app calls it (the auth
 * plugin loaded through the registry, arguments checked), on the in-process store, with the app
 * secret. Before each timed call a fresh code is issued (untimed) to a number of its own by
 * `whatsapp_send_otp` in development mode, where the code is logged instead of sent. Cases: the
 * right code (read, two HMACs, one compareAndSet that deletes), a wrong code (the same, the
 * compareAndSet counts the attempt), no code for the number (one read) and malformed input (no
 * store access). Env: BENCH_TIME (ms of sampling per task, default 1000).
 */
import { Bench } from 'tinybench';
import type { AppSettings, KeyValueStore } from '../plugins/sdk.js';
import { TEST_APP, fakeContext, loadForTest, type FakeContext } from '../plugins/testing.js';
import { auth } from '../stdlib/auth/index.js';
import { createSecretSource } from '../vm/runtime/secrets.js';
import { createInProcessStore } from '../vm/runtime/stores/memory.js';
import { fmt, formatTable, machineDescription, positiveEnv } from './util.js';

const TASK_TIME_MS = positiveEnv('BENCH_TIME', 1000);
const TEMPLATE = 'Your code is {code}';
const APP: AppSettings = { ...TEST_APP, dev: true, secrets: createSecretSource(null, { APP_SECRET: 'bench-app-secret-0123456789abcdefghijkl' }) };

const kit = await loadForTest([auth], APP);
const store: KeyValueStore = createInProcessStore();
// One context for the sends and one for the verifies, on one store: a fresh fake context per call
// would time the fake's own set-up (a store and its timer), not the native.
const sender: FakeContext = { ...fakeContext({ app: APP }), store };
const verifier: FakeContext = { ...fakeContext({ app: APP }), store };

let serial = 0;
/** A number never used before in this run, and the code just issued to it. */
let current = { phone: '', code: '' };

/** Issues a code to a fresh number (development mode: read back from the log line). */
async function issue(): Promise<void> {
  const phone = `+1650${String(serial++).padStart(7, '0')}`;
  await kit.callIn(sender, 'whatsapp_send_otp', phone, TEMPLATE);
  const code = /code for (\+\d+): (\d{6})$/.exec(sender.logs.pop() ?? '');
  if (code === null || code[1] !== phone) throw new Error(`no code was issued to ${phone}`);
  current = { phone, code: code[2]! };
}

function wrong(code: string): string {
  return String((Number(code) + 1) % 1_000_000).padStart(6, '0');
}

async function verify(phone: string, code: string, expected: boolean): Promise<void> {
  const ok = await kit.callIn(verifier, 'whatsapp_verify_otp', phone, code);
  if (ok !== expected) throw new Error(`whatsapp_verify_otp(${phone}, …) answered ${String(ok)}, expected ${expected}`);
}

const bench = new Bench({ time: TASK_TIME_MS });
bench
  .add('right code (used up)', () => verify(current.phone, current.code, true), { beforeEach: issue })
  .add('wrong code (attempt counted)', () => verify(current.phone, wrong(current.code), false), { beforeEach: issue })
  .add('number without a code', () => verify('+16505550000', '123456', false))
  .add('malformed code', () => verify('+16505550000', '12a456', false));
await bench.run();

const rows: string[][] = [];
for (const t of bench.tasks) {
  const r = t.result;
  if (r.state !== 'completed') {
    rows.push([t.name, '-', '-', r.state === 'errored' ? String(r.error) : r.state]);
    continue;
  }
  rows.push([
    t.name,
    `${(r.latency.p50! * 1000).toFixed(1)} µs`,
    `${(r.latency.mean * 1000).toFixed(1)} µs`,
    fmt(1000 / r.latency.mean),
    `±${r.latency.rme.toFixed(1)}%`,
  ]);
}
console.log(`whatsapp_verify_otp per call — ${machineDescription()}, in-process store, ${TASK_TIME_MS} ms per task\n`);
console.log(formatTable(['case', 'median', 'mean', 'calls/s (1/mean)', 'rme'], rows));
