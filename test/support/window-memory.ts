/**
 * The memory of the in-process sliding windows under a flood of distinct clients, measured in a
 * child `node --expose-gc` (heap after a full collection, apart from the caller's own heap): one
 * guard key per IPv4 address, one hit each. No node:test here: the test floods a few hundred
 * thousand keys, bench/window-memory.ts a million.
 */
import { spawnSync } from 'node:child_process';

/** What one flood measured. */
export interface WindowMemory {
  keys: number;
  cap: number;
  held: number;
  maxHeld: number;
  heapBytes: number;
  ms: number;
  /** Keys and heap growth after the window passed and a sweep ran. */
  afterSweep: number;
  sweptBytes: number;
}

/** Hits the windows of a store capped at `cap` keys with `keys` distinct clients, in a child process; its figures. */
export function floodWindows(keys: number, cap: number): WindowMemory {
  const store = new URL('../../vm/runtime/stores/sliding-window.js', import.meta.url).href;
  const guardKeys = new URL('../../stdlib/ratelimit/keys.js', import.meta.url).href;
  const script = `
    const { createSlidingWindows } = await import(${JSON.stringify(store)});
    const { guardKey } = await import(${JSON.stringify(guardKeys)});
    const request = { id: '1', method: 'POST', path: '/login', url: '/login', headers: {}, ip: '', secure: false, params: {}, query: {}, cookies: {}, body: null };
    global.gc();
    const before = process.memoryUsage().heapUsed;
    const started = Date.now();
    const s = createSlidingWindows({ maxKeys: ${cap} });
    let maxHeld = 0;
    const t0 = Date.now();
    for (let i = 0; i < ${keys}; i++) {
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
    process.stdout.write(JSON.stringify({ keys: ${keys}, cap: ${cap}, held, maxHeld, heapBytes, ms, afterSweep: s.size, sweptBytes }));
  `;
  const child = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`the flood's process failed (${child.status}): ${child.stderr}`);
  return JSON.parse(child.stdout) as WindowMemory;
}

/** One line of figures for a report. */
export function describeWindowMemory(f: WindowMemory): string {
  const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
  return `sliding windows, ${f.keys.toLocaleString('en')} distinct keys, cap ${f.cap.toLocaleString('en')}: holds ${f.held.toLocaleString('en')} (max ${f.maxHeld.toLocaleString('en')}), heap +${mb(f.heapBytes)} MB (${Math.round(f.heapBytes / f.held)} B/key), ${f.ms} ms; after the window a sweep leaves ${f.afterSweep} keys, heap +${mb(f.sweptBytes)} MB`;
}
