/**
 * The reference of social-login routes (spec/plugins/auth.md, Social login, "Reference"): the login route's 302 with
 * `Location` and `Set-Cookie`, the callback's coded errors (called directly or through a `fn`)
 * and its cookie, from the natives' declared responses and headers.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../../tools/host.js';
import { introspectBuild } from '../../vm/runtime/introspect-build.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { buildOpenApi } from '../../stdlib/reference/openapi.js';
import { assertValidOpenApi } from './reference-fixtures.js';
import { tempApp } from '../support/temp-app.js';

type Doc = Record<string, any>;

const FILES = {
  'social.rvm': `
/// Wraps the callback, as an app that stores the user would.
fn signed_in(profile) {
  return { email: profile.email }
}

route GET /auth/google {
  response.redirect(auth_google_login())
}

route GET /auth/google/callback {
  response.ok(signed_in(auth_google_callback()))
}

route GET /auth/github/callback {
  response.ok(finish())
}

fn finish() {
  return auth_github_callback()
}

route GET /plain {
  response.ok({ ok: true })
}
`,
};

describe('the reference of social-login routes', () => {
  const dir = tempApp({ after }, FILES);
  let doc: Doc;
  before(async () => {
    const build = await buildApp(dir, { cache: false, logger: captureLogger() });
    doc = buildOpenApi(introspectBuild(build), { version: '3.1' }) as Doc;
  });

  const codes = (response: Doc): string[] => response.content['application/json'].schema.allOf[1].properties.code.enum;

  test('the login route: 302 with Location and Set-Cookie, 503 oauth_not_configured', async () => {
    const responses = doc.paths['/auth/google'].get.responses;
    assert.deepEqual(Object.keys(responses['302'].headers).sort(), ['Location', 'Set-Cookie']);
    assert.deepEqual(codes(responses['503']), ['oauth_not_configured']);
    await assertValidOpenApi(doc, 'social');
  });

  test('the callback: 200 with Set-Cookie and every coded error, also through fns', () => {
    for (const path of ['/auth/google/callback', '/auth/github/callback']) {
      const responses = doc.paths[path].get.responses;
      assert.ok(responses['200'].headers['Set-Cookie'], path);
      assert.deepEqual(
        codes(responses['400']).sort(),
        [
          'oauth_code_missing',
          'oauth_cookie_invalid',
          'oauth_cookie_missing',
          'oauth_exchange_failed',
          'oauth_invalid_id_token',
          'oauth_provider_error',
          'oauth_replayed',
          'oauth_state_mismatch',
        ],
        path,
      );
      assert.deepEqual(codes(responses['403']), ['oauth_denied']);
      assert.deepEqual(codes(responses['502']), ['oauth_provider_unavailable']);
      assert.deepEqual(codes(responses['504']), ['oauth_provider_timeout']);
      assert.equal(responses['400'].headers, undefined, 'the cookie is documented on the answer, not on error bodies');
      assert.match(responses['400'].description, /`auth_(google|github)_callback\(\)` → `oauth_state_mismatch`/);
    }
  });

  test('a route calling no such native gains nothing', () => {
    const responses = doc.paths['/plain'].get.responses;
    assert.deepEqual(Object.keys(responses), ['200', '4XX']);
    assert.equal(responses['200'].headers, undefined);
  });
});
