import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VALIDATOR_NAMES } from '../../stdlib/validation/index.js';
import { rvm } from '../support/rvm-command.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const EXAMPLE_PLUGIN = join(ROOT, 'dist', 'plugins', 'example-plugin', 'index.js');

/** The validator names the listing shows, in order (the `@name` opening each entry). */
function listedNames(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('@'))
    .map((line) => /^@([A-Za-z0-9_]+)/.exec(line)![1]!);
}

describe('rvm validators', () => {
  let app: string;
  before(() => {
    app = mkdtempSync(join(tmpdir(), 'rvm-validators-'));
    writeFileSync(join(app, 'rvm.config.json'), JSON.stringify({ plugins: [EXAMPLE_PLUGIN] }));
  });
  after(() => rmSync(app, { recursive: true, force: true }));

  test('lists the 43 built-in validators and ends with the count', async () => {
    const r = await rvm(['validators']);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(listedNames(r.stdout).sort(), [...VALIDATOR_NAMES].sort());
    assert.equal(r.stdout.trimEnd().split('\n').at(-1), '43 validators');
  });

  test('shows arguments with their types, aliases, field types, plugin and description', async () => {
    const lines = (await rvm(['validators'])).stdout.split('\n');
    const entry = (name: string) => {
      const at = lines.findIndex((l) => l.startsWith(`@${name}(`) || l.startsWith(`@${name} `));
      assert.ok(at >= 0, `no entry for ${name}`);
      return [lines[at]!, lines[at + 1]!];
    };
    const [range, rangeDoc] = entry('range');
    assert.match(range!, /^@range\(min: number, max: number\)\s+text, int, number, list\s+\[validation\]$/);
    assert.match(rangeDoc!, /^\s{4}\S/);
    assert.match(entry('minLength')[0]!, /alias @min_length/);
    assert.match(entry('one_of')[0]!, /^@one_of\(values: any\.\.\.\) \(alias @oneOf\)/);
    assert.match(entry('max_size')[0]!, /^@max_size\(size: text\)\s+file\s+\[validation\]$/);
    assert.match(entry('email')[0]!, /^@email\s+text\s+\[validation\]$/);
    // Aliases are not entries of their own.
    assert.equal(lines.filter((l) => l.startsWith('@min_length')).length, 0);
  });

  test("with DIR, includes the validators of the app's plugins", async () => {
    const r = await rvm(['validators', app]);
    assert.equal(r.status, 0, r.stderr);
    const names = listedNames(r.stdout);
    assert.ok(names.includes('slug_case'));
    assert.match(r.stdout, /^@slug_case \(alias @kebab_case\)\s+text\s+\[slugs\]$/m);
    assert.equal(names.length, 44);
    assert.equal(r.stdout.trimEnd().split('\n').at(-1), '44 validators');
  });

  test('a missing DIR or a plugin that cannot be found is one line on stderr, exit 1', async () => {
    const missing = await rvm(['validators', join(app, 'nope')]);
    assert.equal(missing.status, 1);
    assert.equal(missing.stdout, '');
    assert.match(missing.stderr, /^rvm: no such folder: /);
    const broken = mkdtempSync(join(tmpdir(), 'rvm-validators-'));
    try {
      writeFileSync(join(broken, 'rvm.config.json'), JSON.stringify({ plugins: ['./missing-plugin.js'] }));
      const r = await rvm(['validators', broken]);
      assert.equal(r.status, 1);
      assert.equal(r.stderr.trimEnd().split('\n').length, 1);
      assert.match(r.stderr, /^rvm: plugin '\.\/missing-plugin\.js' was not found/);
    } finally {
      rmSync(broken, { recursive: true, force: true });
    }
  });

  test('appears in rvm help', async () => {
    const r = await rvm(['help']);
    assert.match(r.stdout, /^\s+validators \[DIR\]\s+list every validator/m);
  });
});
