/**
 * A throwaway copy of examples/showcase for tests that load it: the showcase stores records
 * (SQLite in `<app>/.rvm/data.sqlite`), and no test may write into the repository's copy.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's showcase folder (read only). */
export const SHOWCASE_SOURCE = fileURLToPath(new URL('../../../examples/showcase', import.meta.url));

/** Copies the showcase (without any `.rvm/`) into a new temp folder; `remove()` deletes it. */
export function showcaseCopy(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-showcase-'));
  cpSync(SHOWCASE_SOURCE, dir, { recursive: true, filter: (src) => !src.split(sep).includes('.rvm') });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
