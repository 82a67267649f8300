/**
 * The primary-held store runs the same conformance suite as the in-process and Redis stores
 * (conformance.ts): an IpcStore and a PrimaryStore joined by a channel pair that delivers each
 * message later and as JSON, as Node's IPC does (ipc.test.ts runs the store with real processes).
 */
import { describe } from 'node:test';
import { EventEmitter } from 'node:events';
import { IpcStore, PrimaryStore, type IpcChannel } from '../../../../vm/runtime/stores/ipc.js';
import { keyValueConformance, windowConformance } from './conformance.js';

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
function joined(): { store: IpcStore; close: () => void } {
  const worker = new LoopEnd();
  const primarySide = new LoopEnd();
  worker.other = primarySide;
  primarySide.other = worker;
  const primary = new PrimaryStore();
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

describe('primary-held store: conformance', () => {
  keyValueConformance('IPC key/value store', joined);
  windowConformance('IPC sliding windows', joined);
});
