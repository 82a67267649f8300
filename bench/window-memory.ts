/**
 * The heap of the in-process sliding windows under a flood of a million distinct clients (the
 * figures of spec/plugins/ratelimit.md, "Memory"): the default cap, a small one, and no eviction,
 * each in a child `node --expose-gc` (test/support/window-memory.ts; the test suite runs the same
 * flood with fewer keys).
 *
 * Env: BENCH_WINDOW_KEYS (distinct keys, default 1000000).
 */
import { MAX_WINDOW_KEYS } from '../vm/runtime/stores/sliding-window.js';
import { describeWindowMemory, floodWindows } from '../test/support/window-memory.js';
import { positiveEnv } from './util.js';

const KEYS = positiveEnv('BENCH_WINDOW_KEYS', 1_000_000);

for (const cap of [MAX_WINDOW_KEYS, 50_000, KEYS]) console.log(describeWindowMemory(floodWindows(KEYS, cap)));
