// Runs every compiled test file (dist/test/**/*.test.js) with node's test runner, so the run ends
// with its summary (tests, pass, fail). Extra arguments filter files by substring.
import { readdirSync, statSync } from 'node:fs';
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
const files = collect('dist/test')
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort();
const reporter = process.env.RVM_TEST_REPORTER ?? 'spec';
const result = spawnSync(process.execPath, ['--test', `--test-reporter=${reporter}`, ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
