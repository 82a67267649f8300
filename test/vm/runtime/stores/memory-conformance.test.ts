/** The in-process store runs the same conformance suite as the shared ones (conformance.ts). */
import { describe } from 'node:test';
import { createMemoryStore } from '../../../../vm/runtime/store.js';
import { keyValueConformance, windowConformance } from './conformance.js';

describe('in-process store: conformance', () => {
  keyValueConformance('memory key/value store', () => {
    const store = createMemoryStore();
    return { store, close: () => store.close() };
  });
  windowConformance('memory store windows', () => {
    const store = createMemoryStore({ sweepIntervalMs: 0 });
    return { store, close: () => store.close() };
  });
});
