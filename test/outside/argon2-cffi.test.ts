/**
 * Outside check: rvm's Argon2 hashes and Python's argon2-cffi (libargon2) accept each
 * other's. The hashes go through the natives of a running app (argon2_hash, argon2_verify), the
 * Python side through `PasswordHasher` with its own defaults. CI installs Debian's python3-argon2
 * (.ci/run); without it this test fails and says so rather than skipping.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadApp } from '../../tools/host.js';
import type { App } from '../../vm/runtime/app.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';

/** Debian's interpreter: python3-argon2 installs into its dist-packages, whatever python3 PATH finds first. */
const PYTHON = '/usr/bin/python3';
const PASSWORD = 'correct horse battery staple ünïcödé';

const ROUTES = `route POST /hash {
  validate {
    password: text
  }
  response.ok({ hash: argon2_hash(body.password) })
}

route POST /verify {
  validate {
    password: text
    hash: text
  }
  response.ok({ ok: argon2_verify(body.password, body.hash) })
}
`;

/** Runs a Python snippet with the password and hash as arguments; fails the test when argon2-cffi is missing. */
function python(code: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(PYTHON, ['-c', code, ...args], { encoding: 'utf8', timeout: 30_000 });
  const missing = r.error !== undefined || /No module named '?argon2/.test(r.stderr ?? '');
  assert.ok(
    !missing,
    `${PYTHON} with argon2-cffi is needed (Debian: apt-get install python3-argon2); run .ci/run, which installs it.\n${r.error?.message ?? r.stderr}`,
  );
  return { status: r.status, stdout: r.stdout.trim(), stderr: r.stderr };
}

const VERIFY = `import sys
from argon2 import PasswordHasher
from argon2.exceptions import VerifyMismatchError
try:
    PasswordHasher().verify(sys.argv[1], sys.argv[2])
    print("ok")
except VerifyMismatchError:
    print("mismatch")
`;
const HASH = `import sys
from argon2 import PasswordHasher
print(PasswordHasher().hash(sys.argv[1]))
`;

describe("Argon2 interop with Python's argon2-cffi", () => {
  let dir: string;
  let app: App;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-argon2-'));
    writeFileSync(join(dir, 'passwords.rvm'), ROUTES);
    app = await loadApp(dir, { cache: false, logger: captureLogger() });
  });
  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a hash from argon2_hash verifies with argon2-cffi, and a wrong password does not', async () => {
    const res = await inject(app, { method: 'POST', url: '/hash', body: { password: PASSWORD } });
    assert.equal(res.status, 200, res.body);
    const { hash } = res.json() as { hash: string };
    assert.match(hash, /^\$argon2id\$v=19\$m=65536,t=3,p=4\$/);
    assert.deepEqual(python(VERIFY, hash, PASSWORD), { status: 0, stdout: 'ok', stderr: '' });
    assert.equal(python(VERIFY, hash, `${PASSWORD}!`).stdout, 'mismatch');
  });

  test('a hash made by argon2-cffi (its own costs) verifies with argon2_verify, and a wrong password does not', async () => {
    const made = python(HASH, PASSWORD);
    assert.equal(made.status, 0, made.stderr);
    assert.match(made.stdout, /^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$/);
    const right = await inject(app, { method: 'POST', url: '/verify', body: { password: PASSWORD, hash: made.stdout } });
    assert.deepEqual(right.json(), { ok: true });
    const wrong = await inject(app, { method: 'POST', url: '/verify', body: { password: `${PASSWORD}!`, hash: made.stdout } });
    assert.deepEqual(wrong.json(), { ok: false });
  });
});
