/**
 * Memory of the in-process sliding windows under a flood of distinct clients (figures from a child
 * `node --expose-gc`, test/support/window-memory.ts): the store must never hold more than its cap,
 * and its heap must stay under BYTES_PER_KEY per held key.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_WINDOW_KEYS } from '../../../../vm/runtime/stores/sliding-window.js';
import { describeWindowMemory, floodWindows } from '../../../support/window-memory.js';

/**
 * Distinct keys inserted per run: more than the default cap, so it floods past it. The heap is
 * checked per held key, so a regression of a few bytes per key shows at any size once the
 * fixed SLACK_BYTES is small beside the keys (4 MB over 250 000 keys: 17 bytes each); the figures
 * of a million keys come from bench/window-memory.ts.
 */
const KEYS = 250_000;
/** The stated bound: heap per held key, with room over the ~250 bytes measured on 64-bit Node 20. */
const BYTES_PER_KEY = 400;
/** Heap the measurement itself may add besides the keys (the store object, the Map's spare capacity). */
const SLACK_BYTES = 4 * 1024 * 1024;

describe(`sliding-window memory with ${KEYS.toLocaleString('en')} distinct keys`, () => {
  for (const cap of [MAX_WINDOW_KEYS, 50_000, KEYS]) {
    test(`cap ${cap}${cap === MAX_WINDOW_KEYS ? ' (default)' : ''}`, (t) => {
      const f = floodWindows(KEYS, cap);
      t.diagnostic(describeWindowMemory(f));
      assert.ok(f.maxHeld <= cap, `held ${f.maxHeld} keys with cap ${cap}`);
      assert.equal(f.held, Math.min(cap, KEYS));
      assert.ok(f.heapBytes <= f.held * BYTES_PER_KEY + SLACK_BYTES, `heap grew ${f.heapBytes} bytes for ${f.held} keys`);
      assert.equal(f.afterSweep, 0);
      assert.ok(f.sweptBytes <= SLACK_BYTES, `heap still +${f.sweptBytes} bytes after the sweep`);
    });
  }
});
