/**
 * A primary process for the IPC store tests: forked with an IPC channel, it holds a PrimaryStore
 * on a clock its parent sets (`{ harness: 'clock', t }`), so TTLs are tested without waiting.
 * Messages on one channel arrive in order, so a clock set before a request applies to it.
 */
import { PrimaryStore } from '../../vm/runtime/stores/ipc.js';
import type { IpcChannel } from '../../vm/runtime/stores/ipc.js';

let t = 1_000;
const primary = new PrimaryStore({ now: () => t });
primary.attach(process as unknown as IpcChannel);
process.on('message', (m: { harness?: string; t?: number }) => {
  if (m?.harness === 'clock') t = m.t!;
});
process.on('disconnect', () => process.exit(0));
process.send!({ harness: 'ready' });
