/**
 * The `records` standard plugin (DESIGN §6): `type` declarations become stored records —
 * `T.new`, `T.create`, `T.find`, `T.find_by`, `T.where`, `T.page`, `T.count`, `T.update`,
 * `T.delete`, and the statements `save`, `delete` and `transaction { }` — written with the
 * public SDK's record provider (spec/plugins/records.md).
 */
import { definePlugin, type AppSettings } from '../../plugins/sdk.js';
import { MemoryStore } from './memory.js';
import { recordProvider } from './provider.js';
import type { RecordStore } from './store.js';

/**
 * The store an app's records live in. For now the in-memory model (store.ts's reference
 * semantics); this is the one place that will choose SQLite (`app/.rvm/data.sqlite`) by default
 * and PostgreSQL when `DATABASE_URL` is set.
 */
export function makeStore(_settings: AppSettings): RecordStore {
  return new MemoryStore();
}

/** The records plugin definition. */
export const records = definePlugin({
  name: 'records',
  version: '1.0.0',
  dependencies: ['validation'],
  setup(rvm) {
    rvm.records(recordProvider(makeStore(rvm.app)));
  },
});

export default records;
