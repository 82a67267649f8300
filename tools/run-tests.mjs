// Runs every compiled test file (dist/test/**/*.test.js) with node's test runner, so the run ends
// with its summary (tests, pass, fail). Extra arguments filter files by substring.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...collect(path));
    else if (name.endsWith('.test.js')) out.push(path);
  }
  return out;
}

const filters = process.argv.slice(2);
// Only tests whose source still exists: a test deleted or renamed leaves its compiled file in
// dist, which would otherwise run here (and not in a fresh clone).
const files = collect('dist/test')
  .filter((f) => existsSync(f.replace(/^dist[\\/]/, '').replace(/\.js$/, '.ts')))
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort();
// With no file, node's runner would look for tests everywhere on its own.
if (files.length === 0) {
  console.error(`no test file matches ${filters.map((s) => `'${s}'`).join(' or ') || 'dist/test/**/*.test.js'}`);
  process.exit(1);
}
const reporter = process.env.RVM_TEST_REPORTER ?? 'spec';
const result = spawnSync(process.execPath, ['--test', `--test-reporter=${reporter}`, ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
