import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../../../tools/host.js';
import { definePlugin } from '../../../plugins/sdk.js';

const testPlugin = definePlugin({
  name: 'test-guards',
  version: '1.0.0',
  setup(rvm) {
    rvm.native('who', () => null, { params: [], doc: 'The caller.', responses: [{ status: 401, code: 'unauthorized', description: 'No valid token.' }] });
    rvm.guard('token', () => undefined, {
      params: [],
      doc: 'Needs a token.',
      security: { name: 'bearerAuth', scheme: { type: 'http', scheme: 'bearer' } },
      responses: [{ status: 401, code: 'unauthorized', description: 'No valid token.', headers: ['WWW-Authenticate'] }],
    });
  },
});

describe('linker: resolved guards for the reference', () => {
  test('plugin guards carry their meta; guard_definitions their doc and what their body can answer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rvm-link-'));
    try {
      writeFileSync(
        join(dir, 'premium.rvm'),
        `/// Callers of at least the given age.
guard_definition min_age(age) {
  who()
  if 1 < age { fail 403 'Too young' }
}

route GET /premium {
  guard token
  guard min_age(18)
  guards { token: optional }
  response.ok({ content: 'x' })
}`,
      );
      const build = await buildApp(dir, { cache: false, plugins: [testPlugin] });
      assert.deepEqual(
        build.diagnostics.filter((d) => d.severity === 'error'),
        [],
      );
      const [route] = build.linked!.routes;
      const [token, minAge, optional] = route!.guards;
      assert.deepEqual(
        { ...token, security: token!.security },
        {
          name: 'token',
          args: [],
          mode: 'required',
          source: 'plugin',
          origin: 'test-guards',
          doc: 'Needs a token.',
          // One scheme in the guard's meta is a list of one here: any of them lets the caller in.
          security: [{ name: 'bearerAuth', scheme: { type: 'http', scheme: 'bearer' } }],
          responses: [{ status: 401, code: 'unauthorized', description: 'No valid token.', headers: ['WWW-Authenticate'] }],
        },
      );
      assert.equal(minAge!.source, 'app');
      assert.equal(minAge!.origin, 'premium.rvm:2');
      assert.deepEqual(minAge!.args, [18]);
      assert.equal(minAge!.doc, 'Callers of at least the given age.');
      assert.deepEqual(
        minAge!.responses.map((r) => [r.status, r.code]),
        [
          [403, 'forbidden'],
          [401, 'unauthorized'],
        ],
      );
      assert.equal(optional!.mode, 'optional');
      assert.deepEqual(optional!.responses, [], 'an optional guard never rejects');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
