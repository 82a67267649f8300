/**
 * The throwaway copy of an app that `rvm fuzz` runs, so that fuzzing never writes the app's data:
 * the app's files, without its `.rvm/` folder (the SQLite database `.rvm/data.sqlite`, caches),
 * `node_modules` or `.git`, copied to a fresh folder under `<app>/.rvm/`, and an environment
 * without `DATABASE_URL`. The records plugin then opens a new SQLite file inside the copy, and
 * the copy is removed after the run. The copy lives inside the app folder so that its plugins
 * resolve packages as the originals do (from the `node_modules` of the app and its parents).
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';

/** The app's own data and build folder: never copied, and where the copy is made. */
export const DATA_FOLDER = '.rvm';
/** Prefix of the copy's folder name under `<app>/.rvm/`. */
export const SANDBOX_PREFIX = 'fuzz-';
/** The environment variable that points the records plugin at a PostgreSQL database. */
export const DATABASE_URL_ENV = 'DATABASE_URL';
/** Top-level entries the copy leaves out: the app's data, and installed packages (reached from the copy by resolution). */
const NOT_COPIED: ReadonlySet<string> = new Set([DATA_FOLDER, 'node_modules', '.git']);

/** A copy of an app to fuzz: its folder, the environment to run it with, and its removal. */
export interface FuzzSandbox {
  readonly dir: string;
  /** The given environment without DATABASE_URL. */
  readonly env: Record<string, string | undefined>;
  /** Removes the copy (and `<app>/.rvm/` when the copy made it and it is left empty). */
  remove(): void;
}

/** Copies the app in `appDir` into a new sandbox; `env` is the environment the app would have run with. */
export function makeSandbox(appDir: string, env: Record<string, string | undefined> = process.env): FuzzSandbox {
  const data = join(appDir, DATA_FOLDER);
  let madeData = false;
  try {
    readdirSync(data);
  } catch {
    mkdirSync(data, { recursive: true });
    madeData = true;
  }
  const dir = mkdtempSync(join(data, SANDBOX_PREFIX));
  // Entry by entry: the copy sits inside the app, and a folder cannot be copied into itself.
  for (const name of readdirSync(appDir)) {
    if (!NOT_COPIED.has(name)) cpSync(join(appDir, name), join(dir, name), { recursive: true });
  }
  const sandboxEnv: Record<string, string | undefined> = { ...env };
  delete sandboxEnv[DATABASE_URL_ENV];
  return {
    dir,
    env: sandboxEnv,
    remove() {
      rmSync(dir, { recursive: true, force: true });
      if (madeData) {
        try {
          rmdirSync(data);
        } catch {
          // Something else wrote there meanwhile (a server started from the app): keep it.
        }
      }
    },
  };
}
