/**
 * Memory of the in-process sliding windows under a flood of one million distinct clients: each
 * figure comes from a child `node --expose-gc` (so heap is measured after a full collection,
 * apart from the test runner's own heap). The store must never hold more than its cap, and its
 * heap must stay under BYTES_PER_KEY per held key.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { MAX_WINDOW_KEYS } from '../../../../vm/runtime/stores/sliding-window.js';

/** Distinct keys inserted per run. */
const KEYS = 1_000_000;
/** The stated bound: heap per held key, with room over the ~250 bytes measured on 64-bit Node 20. */
const BYTES_PER_KEY = 400;
/** Heap the measurement itself may add besides the keys (the store object, the Map's spare capacity). */
const SLACK_BYTES = 4 * 1024 * 1024;

interface Figures {
  cap: number;
  held: number;
  maxHeld: number;
  heapBytes: number;
  ms: number;
  /** Keys and heap growth after the window passed and a sweep ran. */
  afterSweep: number;
  sweptBytes: number;
}

/** Runs one flood in a child process and returns its figures. */
function flood(cap: number): Figures {
  const store = new URL('../../../../vm/runtime/stores/sliding-window.js', import.meta.url).href;
  const keys = new URL('../../../../stdlib/ratelimit/keys.js', import.meta.url).href;
  const script = `
    const { createSlidingWindows } = await import(${JSON.stringify(store)});
    const { guardKey } = await import(${JSON.stringify(keys)});
    const request = { id: '1', method: 'POST', path: '/login', url: '/login', headers: {}, ip: '', secure: false, params: {}, query: {}, cookies: {}, body: null };
    global.gc();
    const before = process.memoryUsage().heapUsed;
    const started = Date.now();
    const s = createSlidingWindows({ maxKeys: ${cap} });
    let maxHeld = 0;
    const t0 = Date.now();
    for (let i = 0; i < ${KEYS}; i++) {
      request.ip = (10 + (i >>> 24)) + '.' + ((i >>> 16) & 255) + '.' + ((i >>> 8) & 255) + '.' + (i & 255);
      s.hit(guardKey(request, 5, 60), 5, 60000, t0);
      if (s.size > maxHeld) maxHeld = s.size;
    }
    const ms = Date.now() - started;
    global.gc();
    const heapBytes = process.memoryUsage().heapUsed - before;
    const held = s.size;
    // Once the window has passed every key is idle: a sweep returns the memory.
    s.sweep(t0 + 60001);
    global.gc();
    const sweptBytes = process.memoryUsage().heapUsed - before;
    process.stdout.write(JSON.stringify({ cap: ${cap}, held, maxHeld, heapBytes, ms, afterSweep: s.size, sweptBytes }));
  `;
  const child = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  return JSON.parse(child.stdout) as Figures;
}

function report(f: Figures): string {
  const mb = (f.heapBytes / 1024 / 1024).toFixed(1);
  return `sliding windows, ${KEYS.toLocaleString('en')} distinct keys, cap ${f.cap.toLocaleString('en')}: holds ${f.held.toLocaleString('en')} (max ${f.maxHeld.toLocaleString('en')}), heap +${mb} MB (${Math.round(f.heapBytes / f.held)} B/key), ${f.ms} ms; after the window a sweep leaves ${f.afterSweep} keys, heap +${(f.sweptBytes / 1024 / 1024).toFixed(1)} MB`;
}

describe('sliding-window memory with one million distinct keys', () => {
  for (const cap of [MAX_WINDOW_KEYS, 50_000, KEYS]) {
    test(`cap ${cap}${cap === MAX_WINDOW_KEYS ? ' (default)' : ''}`, (t) => {
      const f = flood(cap);
      t.diagnostic(report(f));
      console.log(report(f));
      assert.ok(f.maxHeld <= cap, `held ${f.maxHeld} keys with cap ${cap}`);
      assert.equal(f.held, Math.min(cap, KEYS));
      assert.ok(f.heapBytes <= f.held * BYTES_PER_KEY + SLACK_BYTES, `heap grew ${f.heapBytes} bytes for ${f.held} keys`);
      assert.equal(f.afterSweep, 0);
      assert.ok(f.sweptBytes <= SLACK_BYTES, `heap still +${f.sweptBytes} bytes after the sweep`);
    });
  }
});
