/**
 * The primary-held store runs the same conformance suite as the in-process and Redis stores
 * (conformance.ts): an IpcStore and a PrimaryStore joined by a channel pair that delivers each
 * message later and as JSON, as Node's IPC does (ipc.test.ts runs the store with real processes).
 * The primary keeps time on the suite's fake clock.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { SECURITY_KEY_PREFIX } from '../../../../vm/host/stores.js';
import { RvmError } from '../../../../vm/values.js';
import { IpcStore, PrimaryStore, type IpcChannel, type PrimaryStoreOptions } from '../../../../vm/runtime/stores/ipc.js';
import { fakeClock, keyValueConformance, windowConformance } from './conformance.js';

/** One end of a channel pair: what it sends is emitted, as JSON, on the other end in a later turn. */
class LoopEnd extends EventEmitter implements IpcChannel {
  other!: LoopEnd;
  connected = true;
  send(message: unknown, callback: (error: Error | null) => void): boolean {
    const text = JSON.stringify(message);
    setImmediate(() => {
      this.other.emit('message', JSON.parse(text));
      callback(null);
    });
    return true;
  }
}

/** A worker's store and the primary answering it, joined by a channel pair. */
function joined(options: PrimaryStoreOptions = {}): { store: IpcStore; close: () => void } {
  const worker = new LoopEnd();
  const primarySide = new LoopEnd();
  worker.other = primarySide;
  primarySide.other = worker;
  const primary = new PrimaryStore(options);
  const detach = primary.attach(primarySide);
  const store = new IpcStore(worker);
  return {
    store,
    close: () => {
      store.close();
      detach();
      primary.close();
    },
  };
}

/** A worker's store joined to a primary on a clock of its own, which only the suite moves. */
function onFakeClock() {
  const clock = fakeClock();
  return { ...joined({ now: clock.now }), clock };
}

describe('primary-held store: conformance', () => {
  keyValueConformance('IPC key/value store', onFakeClock);
  windowConformance('IPC sliding windows', onFakeClock);
});

test('security keys over IPC: other keys never evict them in the primary; full of live ones, a new one fails 503 store_full with its code', async () => {
  const { store, close } = joined({ state: { maxKeys: 3, maxSecurityKeys: 3 } });
  try {
    for (let i = 0; i < 3; i++) await store.set(`${SECURITY_KEY_PREFIX}${i}`, i, 60_000);
    for (let i = 0; i < 20; i++) await store.set(`other:${i}`, i);
    for (let i = 0; i < 3; i++) assert.equal(await store.get(`${SECURITY_KEY_PREFIX}${i}`), i);
    await assert.rejects(
      Promise.resolve(store.compareAndSet(`${SECURITY_KEY_PREFIX}new`, undefined, 1, 60_000)),
      (e: unknown) => e instanceof RvmError && e.code === 'store_full',
    );
    assert.equal(await store.get(`${SECURITY_KEY_PREFIX}0`), 0);
  } finally {
    close();
  }
});
