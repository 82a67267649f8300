/**
 * `rvm new DIR`: writes a working app into a new or empty folder, and refuses any other folder
 * without touching it, so running it twice never overwrites an edit.
 */
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { newAppFiles } from '../new-app-files.js';
import { DIAG } from '../../vm/errors.js';
import { CliError, EXIT_OK, out, rvmPackageName, type CliIo, type ParsedArgs } from './common.js';

/** `rvm new` was pointed at something that is not a new or empty folder: nothing was written. */
export class AppExistsError extends CliError {
  readonly code = DIAG.E_APP_EXISTS;
}

/** What the folder holds now, or null when there is nothing at that path. */
function entriesOf(dir: string): string[] | null {
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    return null;
  }
  if (!isDir) throw new AppExistsError(`cannot create an app in ${dir}: it is a file`);
  return readdirSync(dir);
}

/** Writes a new app into `dir` (created when missing) and returns the paths written; refuses a non-empty folder. */
export function createApp(dir: string): string[] {
  const entries = entriesOf(dir);
  if (entries !== null && entries.length > 0) {
    const shown = entries.slice(0, 3).join(', ') + (entries.length > 3 ? ', …' : '');
    throw new AppExistsError(`refusing to create an app in ${dir}: the folder is not empty (${shown}); nothing was written`);
  }
  const files = newAppFiles({ name: basename(resolve(dir)), runtimePackage: rvmPackageName() });
  for (const file of files) {
    const path = join(dir, file.path);
    mkdirSync(dirname(path), { recursive: true });
    // 'wx': a file that appeared since the check above is never overwritten.
    writeFileSync(path, file.text, { flag: 'wx' });
  }
  return files.map((f) => f.path);
}

/** Runs `rvm new`. */
export async function newCommand(args: ParsedArgs, io: CliIo): Promise<number> {
  const dir = args.positionals[0]!;
  const written = createApp(dir);
  out(io, `created ${dir}: ${written.join(', ')}`);
  out(io, '');
  out(io, 'Next:');
  out(io, `  rvm run ${dir}   # serves it; the API reference is at /_app/rest-api`);
  out(io, `  cd ${dir} && node --test   # starts it and requests its routes (test/app.test.mjs)`);
  return EXIT_OK;
}
