/**
 * Heavy dependencies (database drivers, HTTP clients, JWT, QR codes…) loaded when first needed,
 * not when rvm starts: every `rvm` command and every app imports every standard plugin, and
 * loading each one's dependencies up front cost about a second of CPU on each start.
 */

/**
 * Memoises `load`: the first call runs it, every later call answers the same value. For a
 * CommonJS package, `onFirstUse(() => require('pg') as typeof pg)` with a `require` from
 * `createRequire(import.meta.url)` loads it synchronously; for an ES module,
 * `onFirstUse(() => import('jose'))` answers one promise of it. Call it where the dependency is
 * first needed — a store's driver when the store opens, so no request waits for it.
 */
export function onFirstUse<T>(load: () => T): () => T {
  let loaded = false;
  let value: T;
  return () => {
    if (!loaded) {
      value = load();
      loaded = true;
    }
    return value;
  };
}
