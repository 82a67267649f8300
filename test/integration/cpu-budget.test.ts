/**
 * The CPU budget and the time slice over real sockets (`rvm run --prod` in a child process):
 * a loop of natives on a 700 KB text ends in about the budget with 500 cpu_budget_exceeded, and
 * while endless requests run, GET /hello is still answered at once, because the VM yields.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRvm, type RunningCli } from './rvm-run.js';

const APP = `
route GET /hello { response.ok({ message: 'hello' }) }
route GET /spin { while true { } }
route POST /natives {
  txt = request.body
  n = 0
  for line in split(txt, '\\n') { n = n + len(replace(txt, line, '')) }
  response.ok({ n: n })
}
`;

/** 700 KB of short lines: each iteration of /natives scans and rebuilds the whole text. */
const TEXT = 'lorem ipsum dolor sit amet\n'.repeat(26_000);

async function timed(url: string, init?: RequestInit): Promise<{ status: number; body: unknown; ms: number }> {
  const started = performance.now();
  const res = await fetch(url, init);
  const body: unknown = await res.json();
  return { status: res.status, body, ms: performance.now() - started };
}

describe('CPU budget over real sockets', () => {
  let dir: string;
  let cli: RunningCli;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-budget-'));
    writeFileSync(join(dir, 'app.rvm'), APP);
    cli = await startRvm(dir);
  });

  after(() => {
    cli.child.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a loop of natives on a 700 KB body ends in about the CPU budget with 500 cpu_budget_exceeded', async () => {
    const res = await timed(`${cli.url}/natives`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: TEXT });
    assert.equal(res.status, 500);
    assert.deepEqual(res.body, { error: 'execution used more than 1000 ms of CPU', code: 'cpu_budget_exceeded' });
    assert.ok(res.ms < 3000, `answered after ${res.ms.toFixed(0)} ms`);
  });

  test('while an endless request runs, GET /hello is answered within 100 ms', async () => {
    const spin = timed(`${cli.url}/spin`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const probe = await timed(`${cli.url}/hello`);
    assert.equal(probe.status, 200);
    assert.ok(probe.ms < 100, `probe answered after ${probe.ms.toFixed(0)} ms`);
    const ended = await spin;
    assert.equal(ended.status, 500);
    assert.equal((ended.body as { code: string }).code, 'fuel_exhausted');
  });

  test('with 10 endless requests in parallel the probe is still answered quickly, and each ends with its 500', async () => {
    const spins = Array.from({ length: 10 }, () => timed(`${cli.url}/spin`));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const probes: number[] = [];
    for (let i = 0; i < 5; i++) {
      const probe = await timed(`${cli.url}/hello`);
      assert.equal(probe.status, 200);
      probes.push(probe.ms);
    }
    // Each endless request holds the loop for one slice per turn: ten of them, about 100 ms (a
    // second would mean no yield at all). The median, as one probe may meet a garbage collection.
    const median = [...probes].sort((a, b) => a - b)[2]!;
    assert.ok(median < 250, `probes answered after ${probes.map((ms) => ms.toFixed(0)).join(', ')} ms`);
    for (const spin of await Promise.all(spins)) {
      assert.equal(spin.status, 500);
      assert.ok(['fuel_exhausted', 'cpu_budget_exceeded'].includes((spin.body as { code: string }).code));
    }
  });
});
