/** The in-process store runs the same conformance suite as the shared ones (conformance.ts), on a fake clock. */
import { describe } from 'node:test';
import { createInProcessStore } from '../../../../vm/runtime/stores/memory.js';
import { fakeClock, keyValueConformance, windowConformance } from './conformance.js';

/** A store on a clock of its own, which only the suite moves. */
function made() {
  const clock = fakeClock();
  const store = createInProcessStore({ now: clock.now, sweepIntervalMs: 0 });
  return { store, clock, close: () => store.close() };
}

describe('in-process store: conformance', () => {
  keyValueConformance('memory key/value store', made);
  windowConformance('memory store windows', made);
});
