import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, symlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_SECRET_BYTES, createSecretSource, readSecretFile } from '../../../vm/runtime/secrets.js';
import { plantSpecial } from '../special-files.js';
import { tempApp } from '../../support/temp-app.js';
import { RvmError, SecretText, revealText, toText, valuesEqual } from '../../../vm/values.js';

/** An app with one secret, jwt_secret, and a file beside .secrets/. */
const APP = { '.secrets/jwt_secret': 'k'.repeat(40) + '\n', 'outside.txt': 'not a secret' };

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof RvmError);
    return e.code;
  }
  assert.fail('expected an error');
}

describe('secret files', () => {
  test('reads a secret without its trailing newline; a missing one is null', (t) => {
    const dir = tempApp(t, APP);
    assert.equal(readSecretFile(dir, 'jwt_secret'), 'k'.repeat(40));
    assert.equal(readSecretFile(dir, 'nope'), null);
  });

  test('names that could leave .secrets/ are refused', (t) => {
    const dir = tempApp(t, APP);
    for (const name of ['../outside.txt', '..', '.', '/etc/passwd', 'a/b', 'a\\b', '', 'x y', 'é', '%2e%2e']) {
      assert.equal(
        codeOf(() => readSecretFile(dir, name)),
        'invalid_secret_name',
        name,
      );
    }
  });

  test('a FIFO or a directory is refused at once with a clear error; a file over MAX_SECRET_BYTES too', (t) => {
    const dir = tempApp(t, APP);
    plantSpecial(join(dir, '.secrets'), 'pipe', 'fifo');
    plantSpecial(join(dir, '.secrets'), 'folder', 'directory');
    for (const [name, kind] of [
      ['pipe', 'a FIFO'],
      ['folder', 'a directory'],
    ]) {
      assert.throws(
        () => readSecretFile(dir, name),
        (e: unknown) => e instanceof RvmError && e.code === 'invalid_secret_name' && e.message === `secret '${name}' is not a regular file (${kind})`,
      );
    }
    writeFileSync(join(dir, '.secrets', 'at_cap'), 'k'.repeat(MAX_SECRET_BYTES));
    assert.equal(readSecretFile(dir, 'at_cap')?.length, MAX_SECRET_BYTES);
    writeFileSync(join(dir, '.secrets', 'over_cap'), 'k'.repeat(MAX_SECRET_BYTES + 1));
    assert.equal(
      codeOf(() => readSecretFile(dir, 'over_cap')),
      'secret_too_large',
    );
    // A dangling symlink is a missing secret.
    symlinkSync(join(dir, '.secrets', 'gone'), join(dir, '.secrets', 'dangling'));
    assert.equal(readSecretFile(dir, 'dangling'), null);
  });

  test('a symlink leading out of .secrets/ is refused', (t) => {
    const dir = tempApp(t, APP);
    symlinkSync(join(dir, 'outside.txt'), join(dir, '.secrets', 'sneaky'));
    assert.equal(
      codeOf(() => readSecretFile(dir, 'sneaky')),
      'secret_outside',
    );
    symlinkSync(join(dir, '.secrets', 'jwt_secret'), join(dir, '.secrets', 'alias'));
    assert.equal(readSecretFile(dir, 'alias'), 'k'.repeat(40));
  });

  test('the app secret: APP_SECRET first, else generated once into .secrets/app_secret (0600)', (t) => {
    const dir = tempApp(t);
    assert.equal(createSecretSource(dir, { APP_SECRET: 'from-env' }).appSecret(), 'from-env');
    const generated = createSecretSource(dir, {}).appSecret();
    assert.ok(generated.length >= 43);
    assert.equal(statSync(join(dir, '.secrets', 'app_secret')).mode & 0o777, 0o600);
    assert.equal(createSecretSource(dir, {}).appSecret(), generated, 'a restart reuses it');
  });
});

describe('secret values', () => {
  test('show as [secret] in text and JSON, and compare by their real value', () => {
    const s = new SecretText('hunter2');
    assert.equal(toText(s), '[secret]');
    assert.equal(JSON.stringify({ key: s }), '{"key":"[secret]"}');
    assert.equal(toText([s]), '["[secret]"]');
    assert.equal(revealText(s), 'hunter2');
    assert.ok(valuesEqual(s, 'hunter2'));
    assert.ok(!valuesEqual(s, 'hunter3'));
    assert.ok(!valuesEqual(s, 7));
  });
});
