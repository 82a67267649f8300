/**
 * Outside check: codes computed by an independent TOTP — RFC 6238 written
 * inline in Python with only its standard library's hmac, hashlib and base64 — are accepted once
 * by a running showcase (`rvm run`, real HTTP on loopback) and refused when submitted again.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { SignJWT } from 'jose';
import { startRvm, type RunningCli } from '../integration/rvm-run.js';
import { showcaseCopy } from '../support/showcase.js';

const PYTHON = '/usr/bin/python3';
const JWT_SECRET = 'outside-totp-test-key-0123456789abcdef';

/** RFC 6238 with SHA-1, 6 digits, 30 s, T0 = 0, from the RFC's own description; argv: secret, step offset. */
const TOTP = `import base64, hashlib, hmac, struct, sys, time
secret = sys.argv[1]
key = base64.b32decode(secret + "=" * (-len(secret) % 8), casefold=True)
counter = int(time.time()) // 30 + int(sys.argv[2])
mac = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
offset = mac[-1] & 0x0F
binary = struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF
print("%06d" % (binary % 1000000))
`;

/** The Python TOTP code of `secret`, `offset` steps from now. */
function pythonCode(secret: string, offset: number): string {
  const r = spawnSync(PYTHON, ['-c', TOTP, secret, String(offset)], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(r.status, 0, r.error?.message ?? r.stderr);
  const code = r.stdout.trim();
  assert.match(code, /^\d{6}$/);
  return code;
}

describe('TOTP against an independent Python implementation', () => {
  // Served by `rvm run --prod`, which refuses passwords hashed at test cost.
  const showcase = showcaseCopy({ passwords: 'production' });
  let server: RunningCli;
  let auth: Record<string, string>;

  before(async () => {
    server = await startRvm(showcase.dir, { ...process.env, JWT_SECRET });
    const created = await fetch(`${server.url}/api/users`, {
      method: 'POST',
      headers: { 'x-api-key': 'showcase-key', 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'outside@example.com', name: 'Outside' }),
    });
    assert.equal(created.status, 201);
    const { id } = (await created.json()) as { id: string };
    const token = await new SignJWT({ sub: id })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode(JWT_SECRET));
    auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  });

  after(() => {
    server?.child.kill('SIGTERM');
    showcase.remove();
  });

  const post = async (path: string, body: object = {}) => {
    const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  test('enrol; a Python-computed code is accepted once and refused on replay', async () => {
    const setup = await post('/2fa/setup');
    assert.equal(setup.status, 200);
    const secret = setup.body.secret as string;
    assert.match(String(setup.body.uri), new RegExp(`secret=${secret}&issuer=`));

    const code = pythonCode(secret, 0);
    const enabled = await post('/2fa/enable', { code });
    assert.equal(enabled.status, 200, JSON.stringify(enabled.body));
    assert.equal((enabled.body.backup_codes as string[]).length, 10);
    const replay = await post('/2fa/verify', { code });
    assert.equal(replay.status, 401);
    assert.equal(replay.body.code, 'invalid_code');

    // The next step's code (within the one step of drift) is new: accepted once, then refused.
    const next = pythonCode(secret, 1);
    assert.equal((await post('/2fa/verify', { code: next })).status, 200);
    const again = await post('/2fa/verify', { code: next });
    assert.equal(again.status, 401);
    assert.equal(again.body.code, 'invalid_code');
  });
});
