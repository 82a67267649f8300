/**
 * The `records` standard plugin (DESIGN §6): `type` declarations become stored records —
 * `T.new`, `T.create`, `T.find`, `T.find_by`, `T.where`, `T.page`, `T.count`, `T.update`,
 * `T.delete`, and the statements `save`, `delete` and `transaction { }` — written with the
 * public SDK's record provider (spec/plugins/records.md).
 */
import { definePlugin, type AppSettings } from '../../plugins/sdk.js';
import { acquireStore, databaseTarget, releaseStore } from './database.js';
import { recordProvider, type StoreSource } from './provider.js';

/**
 * The store an app's records live in (database.ts): SQLite at `<app>/.rvm/data.sqlite` by
 * default, PostgreSQL when `DATABASE_URL` is set. Nothing is opened until the app starts with
 * at least one `type`.
 */
export function makeStore(settings: AppSettings): StoreSource {
  const target = databaseTarget(settings);
  return { name: target.shown, acquire: () => acquireStore(target), release: () => releaseStore(target) };
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
