/** The in-process stores run the same conformance suite as the shared ones (conformance.ts). */
import { describe } from 'node:test';
import { createMemoryStore } from '../../../../vm/runtime/store.js';
import { createMemoryRateLimitStore } from '../../../../stdlib/ratelimit/store.js';
import { keyValueConformance, windowConformance } from './conformance.js';

describe('in-process stores: conformance', () => {
  keyValueConformance('memory key/value store', () => {
    const store = createMemoryStore();
    return { store, close: () => store.close() };
  });
  windowConformance('memory rate-limit store', () => {
    const store = createMemoryRateLimitStore({ sweepIntervalMs: 0 });
    return { store, close: () => store.close() };
  });
});
