/**
 * App folders for tests: written from a map of files into the temp directory and removed when the
 * test that made them is over, so a run leaves nothing behind. No node:test import: a test passes
 * its context, a suite `{ after }` from its body.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Runs a function once a test is over: node:test's test context `t`, or `{ after }` called in a suite's body. */
export interface TestCleanup {
  after(fn: () => unknown): void;
}

/** An app's files: path relative to its folder (folders made as needed) → content. */
export type AppFiles = Readonly<Record<string, string | Uint8Array>>;

/** Writes `files` into `dir`, making the folders their paths name. */
export function writeFiles(dir: string, files: AppFiles): void {
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
}

/** A new temporary folder holding `files`; the caller removes it (tempApp does, for a test). */
export function makeTempFolder(files: AppFiles = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-app-'));
  writeFiles(dir, files);
  return dir;
}

/**
 * Writes `files` into a new temporary folder, removed once `t` is over; returns the folder's path.
 * `after` hooks run in the order they were added: a server or app using the folder is stopped by
 * one added before this call, or in the test's own `finally`.
 */
export function tempApp(t: TestCleanup, files: AppFiles = {}): string {
  const dir = makeTempFolder(files);
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
