/**
 * The `records` standard plugin (spec/plugins/records.md): `type` declarations become stored records —
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
 * at least one `type`; opening it calls `opened` with the line `rvm run` prints.
 */
export function makeStore(settings: AppSettings, opened: (line: string) => void = () => {}): StoreSource {
  const target = databaseTarget(settings);
  return {
    name: target.shown,
    acquire: () => {
      opened(target.line);
      return acquireStore(target);
    },
    release: () => releaseStore(target),
  };
}

/** The records plugin definition. */
export const records = definePlugin({
  name: 'records',
  version: '1.0.0',
  dependencies: ['validation'],
  setup(rvm) {
    // Announced when the app opens it (it declares a type): an app without types uses no database.
    rvm.records(recordProvider(makeStore(rvm.app, (line) => rvm.announce('Database', line))));
  },
});

export default records;
