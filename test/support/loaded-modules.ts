/**
 * Which modules a spawned rvm process loads: `node --import` of this file (loadedModulesOptions)
 * records every module the process loads into a file, so a test or benchmark can say what a
 * command pulls in. ES modules are recorded as they resolve (a loader hook, loaded-modules-hooks.ts);
 * CommonJS ones — every driver rvm depends on, whether imported or required — from the CommonJS
 * module cache when the process exits. The process must exit normally (a SIGTERM to `rvm run`
 * does), not be killed.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

/** The environment variable naming the file the preloaded process writes to. */
const FILE_VARIABLE = 'RVM_LOADED_MODULES_FILE';

/** NODE_OPTIONS and the variable that make a spawned node record what it loads into `file`. */
export function loadedModulesEnv(file: string): Record<string, string> {
  return { NODE_OPTIONS: `--import=${import.meta.url}`, [FILE_VARIABLE]: file };
}

/** The packages (names under node_modules) whose modules the recorded process loaded, sorted. */
export function loadedPackages(file: string): string[] {
  const names = new Set<string>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const match = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(line);
    if (match) names.add(match[1]!);
  }
  return [...names].sort();
}

/** How many modules of rvm itself (its dist/ folder) the recorded process loaded. */
export function loadedOwnModules(file: string): number {
  const own = new Set(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => /\/dist\/.*\.js$/.test(line) && !line.includes('/node_modules/')),
  );
  return own.size;
}

const file = process.env[FILE_VARIABLE];
// Imported by a test for its helpers (the variable unset), this file records nothing.
if (file !== undefined) {
  register(new URL('./loaded-modules-hooks.js', import.meta.url), { data: { file } });
  const cache = createRequire(import.meta.url).cache;
  process.on('exit', () =>
    appendFileSync(
      file,
      Object.keys(cache)
        .map((path) => `${pathToFileURL(path).href}\n`)
        .join(''),
    ),
  );
}
