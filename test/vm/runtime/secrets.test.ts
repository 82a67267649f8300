import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, symlinkSync, statSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_SECRET_BYTES, createSecretSource, readSecretFile } from '../../../vm/runtime/secrets.js';
import { plantSpecial } from '../special-files.js';
import { RvmError, SecretText, revealText, toText, valuesEqual } from '../../../vm/values.js';

function app(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-secrets-'));
  mkdirSync(join(dir, '.secrets'));
  writeFileSync(join(dir, '.secrets', 'jwt_secret'), 'k'.repeat(40) + '\n');
  writeFileSync(join(dir, 'outside.txt'), 'not a secret');
  return dir;
}

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
  test('reads a secret without its trailing newline; a missing one is null', () => {
    const dir = app();
    try {
      assert.equal(readSecretFile(dir, 'jwt_secret'), 'k'.repeat(40));
      assert.equal(readSecretFile(dir, 'nope'), null);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('names that could leave .secrets/ are refused', () => {
    const dir = app();
    try {
      for (const name of ['../outside.txt', '..', '.', '/etc/passwd', 'a/b', 'a\\b', '', 'x y', 'é', '%2e%2e']) {
        assert.equal(codeOf(() => readSecretFile(dir, name)), 'invalid_secret_name', name);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a FIFO or a directory is refused at once with a clear error; a file over MAX_SECRET_BYTES too', () => {
    const dir = app();
    try {
      plantSpecial(join(dir, '.secrets'), 'pipe', 'fifo');
      plantSpecial(join(dir, '.secrets'), 'folder', 'directory');
      for (const [name, kind] of [['pipe', 'a FIFO'], ['folder', 'a directory']]) {
        assert.throws(() => readSecretFile(dir, name), (e: unknown) => e instanceof RvmError && e.code === 'invalid_secret_name' && e.message === `secret '${name}' is not a regular file (${kind})`);
      }
      writeFileSync(join(dir, '.secrets', 'at_cap'), 'k'.repeat(MAX_SECRET_BYTES));
      assert.equal(readSecretFile(dir, 'at_cap')?.length, MAX_SECRET_BYTES);
      writeFileSync(join(dir, '.secrets', 'over_cap'), 'k'.repeat(MAX_SECRET_BYTES + 1));
      assert.equal(codeOf(() => readSecretFile(dir, 'over_cap')), 'secret_too_large');
      // A dangling symlink is a missing secret.
      symlinkSync(join(dir, '.secrets', 'gone'), join(dir, '.secrets', 'dangling'));
      assert.equal(readSecretFile(dir, 'dangling'), null);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a symlink leading out of .secrets/ is refused', () => {
    const dir = app();
    try {
      symlinkSync(join(dir, 'outside.txt'), join(dir, '.secrets', 'sneaky'));
      assert.equal(codeOf(() => readSecretFile(dir, 'sneaky')), 'secret_outside');
      symlinkSync(join(dir, '.secrets', 'jwt_secret'), join(dir, '.secrets', 'alias'));
      assert.equal(readSecretFile(dir, 'alias'), 'k'.repeat(40));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the app secret: APP_SECRET first, else generated once into .secrets/app_secret (0600)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rvm-appsecret-'));
    try {
      assert.equal(createSecretSource(dir, { APP_SECRET: 'from-env' }).appSecret(), 'from-env');
      const generated = createSecretSource(dir, {}).appSecret();
      assert.ok(generated.length >= 43);
      assert.equal(statSync(join(dir, '.secrets', 'app_secret')).mode & 0o777, 0o600);
      assert.equal(createSecretSource(dir, {}).appSecret(), generated, 'a restart reuses it');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
