/**
 * The OpenAPI export: every document (3.1 and 3.0, JSON and YAML, the showcase's and generated
 * apps') passes a standard validator, maps routes, guards, validators and bodies as the
 * contract says, is cached per reload generation with an ETag, is gated in production, and the
 * events stream announces reloads.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { parse as parseYaml } from 'yaml';
import type { App } from '../../vm/runtime/app.js';
import { buildApp, loadApp } from '../../tools/host.js';
import { introspectBuild } from '../../vm/runtime/introspect-build.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { startServer } from '../../vm/runtime/http/server.js';
import { captureLogger, type CaptureLogger } from '../../vm/runtime/log.js';
import { buildOpenApi, docParts } from '../../stdlib/reference/openapi.js';
import { downgradeSchema } from '../../stdlib/reference/downgrade.js';
import { renderedSpec } from '../../stdlib/reference/openapi-cache.js';
import { openEventStreams } from '../../stdlib/reference/events.js';
import { toYaml } from '../../stdlib/reference/yaml.js';
import type { AppIntrospection } from '../../plugins/sdk.js';
import { KITCHEN_SINK, assertValidOpenApi, assertValidSchemas31 } from './reference-fixtures.js';
import { tempApp, type TestCleanup } from '../support/temp-app.js';
import { showcaseCopy } from '../support/showcase.js';

const SHOWCASE = new URL('../../../examples/showcase', import.meta.url).pathname;

async function introspect(dir: string): Promise<AppIntrospection> {
  const build = await buildApp(dir, { cache: false });
  assert.equal(build.linked !== null, true, `the app compiles: ${build.diagnostics.map((d) => `${d.file}:${d.line} ${d.code} ${d.message}`).join('; ')}`);
  return introspectBuild(build);
}

type Doc = Record<string, any>;

function operations(doc: Doc): { method: string; path: string; op: Doc }[] {
  return Object.entries(doc.paths as Doc).flatMap(([path, item]) => Object.entries(item as Doc).map(([method, op]) => ({ method, path, op: op as Doc })));
}

async function assertAllRenderingsValid(app: AppIntrospection, label: string): Promise<{ d31: Doc; d30: Doc }> {
  const d31 = buildOpenApi(app, { version: '3.1' }) as Doc;
  const d30 = buildOpenApi(app, { version: '3.0' }) as Doc;
  assert.equal(d31.openapi, '3.1.0');
  assert.equal(d30.openapi, '3.0.3');
  await assertValidOpenApi(d31, `${label} 3.1`);
  await assertValidOpenApi(d30, `${label} 3.0`);
  assertValidSchemas31(d31);
  // The YAML reads back as the very document validated above, so it is as valid: validating it
  // again would only repeat the validator's work.
  for (const doc of [d31, d30]) assert.deepEqual(parseYaml(toYaml(doc)), doc, `${label} ${doc.openapi}: the YAML reads back as the document`);
  return { d31, d30 };
}

describe('the OpenAPI document passes a standard validator', () => {
  test('the showcase, 3.1 and 3.0, JSON and YAML', async () => {
    const app = await introspect(SHOWCASE);
    const { d31 } = await assertAllRenderingsValid(app, 'showcase');
    assert.ok(operations(d31).length >= 20, 'every showcase route is there');
    // Its doc comments wrap mid-sentence; every summary still ends one.
    for (const { method, path, op } of operations(d31)) assert.match(op.summary, /[.!?]$/, `${method} ${path}: ${op.summary}`);
    assert.equal(
      d31.paths['/auth/login'].post.summary,
      'Signs in: checks the password against the stored Argon2id hash, then issues a one-hour JWT, both in the rvm_session cookie (browsers) and in the body (API clients send it as Bearer).',
    );
  });

  test('an upload route whose files are optional lists JSON and the form beside multipart, without the files; the server takes them', async () => {
    const d31 = buildOpenApi(await introspect(SHOWCASE), { version: '3.1' }) as Doc;
    const content = d31.paths['/api/signup'].post.requestBody.content;
    assert.deepEqual(Object.keys(content), ['multipart/form-data', 'application/json', 'application/x-www-form-urlencoded']);
    assert.ok(content['multipart/form-data'].schema.properties.avatar, 'the upload goes as multipart');
    for (const type of ['application/json', 'application/x-www-form-urlencoded']) {
      assert.equal(content[type].schema.properties.avatar, undefined, `${type} carries no file`);
      assert.ok(content[type].schema.properties.email, type);
    }
    const copy = showcaseCopy();
    const app = await loadApp(copy.dir, { cache: false });
    try {
      const sent = { email: 'ada@example.com', password: 'correct horse', age: 30 };
      const json = await inject(app, {
        method: 'POST',
        url: '/api/signup',
        headers: { 'x-api-key': 'showcase-key', 'content-type': 'application/json' },
        body: JSON.stringify(sent),
      });
      assert.equal(json.status, 201, json.body);
      const form = await inject(app, {
        method: 'POST',
        url: '/api/signup',
        headers: { 'x-api-key': 'showcase-key', 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...sent, age: '30' }).toString(),
      });
      assert.equal(form.status, 201, form.body);
    } finally {
      await app.close();
      copy.remove();
    }
  });

  test('a generated app with every field type, guard kind, multipart, query and wildcard', async (t) => {
    const dir = tempApp(t, KITCHEN_SINK);
    await assertAllRenderingsValid(await introspect(dir), 'kitchen sink');
  });

  test('the checks can fail: a path parameter left undeclared and a malformed schema are refused', async () => {
    const doc = { openapi: '3.1.0', info: { title: 't', version: '1' }, paths: { '/a/{id}': { get: { responses: { '200': { description: 'ok' } } } } } };
    await assert.rejects(assertValidOpenApi(doc, 'broken'));
    assert.throws(() => assertValidSchemas31({ components: { schemas: { Bad: { type: 'lots', required: 'x' } } } }));
  });
});

describe('the mapping', () => {
  let doc: Doc;
  let doc30: Doc;
  const op = (method: string, path: string): Doc => doc.paths[path][method];

  test('build the kitchen sink', async (t) => {
    const dir = tempApp(t, KITCHEN_SINK);
    const app = await introspect(dir);
    doc = buildOpenApi(app, { version: '3.1', serverUrl: 'https://api.example.test' }) as Doc;
    doc30 = buildOpenApi(app, { version: '3.0' }) as Doc;
  });

  test('info from rvm.config.json, servers, generation and errors', () => {
    assert.deepEqual([doc.info.title, doc.info.version], ['Kitchen sink', '2.1.0']);
    assert.deepEqual(doc.servers, [{ url: 'https://api.example.test' }]);
    assert.deepEqual(doc30.servers, [{ url: '/' }]);
    assert.equal(doc['x-rvm-generation'], 0);
    assert.deepEqual(doc['x-rvm-errors'], []);
  });

  test('operationIds are unique and read as method + path words; tags group by first segment', () => {
    const all = operations(doc);
    const ids = all.map((o) => o.op.operationId as string);
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(op('get', '/items/{id}').operationId, 'get_items_id');
    assert.equal(op('get', '/').operationId, 'get_root');
    const tagNames = (doc.tags as Doc[]).map((t) => t.name);
    assert.deepEqual(tagNames, ['/', 'anything', 'claims', 'files', 'items', 'legacy']);
    for (const t of doc.tags as Doc[]) assert.equal(typeof t.description, 'string');
    for (const o of all) assert.ok(tagNames.includes(o.op.tags[0]), `${o.method} ${o.path} has a declared tag`);
    assert.deepEqual(op('put', '/items/{id}/photo').tags, ['items']);
  });

  test('summary, description, x-rvm-route and x-rvm-source', () => {
    const list = op('get', '/items');
    assert.equal(list.summary, 'Lists items.');
    assert.equal(list.description, 'Filter with q; page counts from 1.');
    assert.equal(list['x-rvm-route'], 'GET /items');
    assert.equal(list['x-rvm-source'], 'items.rvm:3');
    assert.equal(op('delete', '/items/{id}').summary, 'DELETE /items/{id}');
    assert.equal(op('put', '/items/{id}/photo')['x-rvm-route'], 'PUT /items/{id}/photo');
  });

  test('a summary is the first sentence across line breaks; the rest is the description', () => {
    assert.deepEqual(
      docParts('Signs in: checks the password, then issues a JWT,\nboth in the cookie (e.g. for browsers) and in the body.\nTen attempts a minute.'),
      {
        summary: 'Signs in: checks the password, then issues a JWT, both in the cookie (e.g. for browsers) and in the body.',
        description: 'Ten attempts a minute.',
      },
    );
    assert.deepEqual(docParts('Version 1.5 is out! Read on'), { summary: 'Version 1.5 is out!', description: 'Read on' });
    assert.deepEqual(docParts('A heading without a stop\n\nThe body.'), { summary: 'A heading without a stop', description: 'The body.' });
    assert.deepEqual(docParts('One sentence.'), { summary: 'One sentence.', description: '' });
  });

  test('an ANY route answers every method under one x-rvm-route; GET gets no HEAD twin', () => {
    assert.deepEqual(Object.keys(doc.paths['/anything']), ['get', 'put', 'post', 'delete', 'patch']);
    for (const o of Object.values(doc.paths['/anything']) as Doc[]) assert.equal(o['x-rvm-route'], 'ANY /anything');
    assert.equal(doc.paths['/items'].head, undefined);
  });

  test('path parameters, the wildcard included, are required strings', () => {
    assert.deepEqual(op('get', '/items/{id}').parameters, [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }]);
    const [wild] = op('get', '/files/{path}').parameters as Doc[];
    assert.equal(wild!.name, 'path');
    assert.equal(wild!.required, true);
    assert.equal(wild!['x-rvm-wildcard'], true);
  });

  test('query fields become query parameters with their validators as keywords', () => {
    const params = op('get', '/items').parameters as Doc[];
    const by = (name: string) => params.find((p) => p.name === name)!;
    assert.deepEqual(
      params.map((p) => p.in),
      Array(7).fill('query'),
    );
    assert.equal(by('q').required, false);
    assert.equal(by('q').description, 'Search text.');
    assert.equal(by('q').schema.minLength, 1);
    assert.equal(by('q').schema.maxLength, 50);
    assert.deepEqual([by('page').schema.type, by('page').schema.minimum, by('page').schema.default], ['integer', 1, 1]);
    assert.deepEqual([by('ratio').schema.minimum, by('ratio').schema.maximum], [0, 1]);
    assert.deepEqual([by('tags').schema.type, by('tags').style, by('tags').explode, by('tags').schema.maxItems], ['array', 'form', true, 5]);
    assert.equal(by('at').schema.format, 'date-time');
    assert.deepEqual(by('page').schema['x-rvm-decorators'], [
      { name: 'min', args: [1], message: 'must be at least 1' },
      { name: 'default', args: [1], message: null },
    ]);
  });

  test('a JSON body is offered as JSON and as a form, with required fields and validator keywords', () => {
    const body = op('post', '/items').requestBody;
    assert.equal(body.required, true);
    assert.deepEqual(Object.keys(body.content), ['application/json', 'application/x-www-form-urlencoded']);
    const schema = body.content['application/json'].schema;
    assert.deepEqual(schema.required, ['name', 'price', 'kind']);
    assert.deepEqual(body.content['application/x-www-form-urlencoded'].schema, schema);
    const p = schema.properties;
    assert.equal(p.name.minLength, 2);
    assert.equal(typeof p.name.pattern, 'string');
    assert.equal(p.name.description, 'The display name.');
    assert.equal(p.email.format, 'email');
    assert.deepEqual([p.price.minimum, p.price.multipleOf], [0, 0.01]);
    assert.deepEqual([p.qty.minimum, p.qty.maximum, p.qty.default], [1, 100, 1]);
    assert.deepEqual(p.kind.enum, ['a', 'b']);
    assert.deepEqual(p.tags.contains, { const: 'x' });
    assert.equal(p.payload.contentMediaType, 'application/json');
    assert.equal(p.blob.contentEncoding, 'base64');
    assert.equal(p.flag.type, 'boolean');
    assert.equal(p.extra.type, 'object');
    assert.deepEqual(
      p.name['x-rvm-decorators'].map((d: Doc) => d.name),
      ['minLength', 'alpha'],
    );
    assert.equal(p.name['x-rvm-type'], 'text');
    assert.equal(op('post', '/items')['x-rvm-body-kind'], 'json');
    assert.equal(op('get', '/items')['x-rvm-body-kind'], null);
  });

  test('a body with a file is multipart only, files as binary strings with their media types', () => {
    const o = op('put', '/items/{id}/photo');
    assert.equal(o['x-rvm-body-kind'], 'multipart');
    const media = o.requestBody.content['multipart/form-data'];
    assert.deepEqual(Object.keys(o.requestBody.content), ['multipart/form-data']);
    const photo = media.schema.properties.photo;
    assert.deepEqual([photo.type, photo.contentMediaType, photo.format], ['string', 'image/*', undefined]);
    assert.equal(media.schema.properties.caption.type, 'string');
    assert.equal(media.encoding.photo.contentType, 'image/*');
    assert.equal(media.encoding.sheet.contentType, 'application/pdf');
    assert.match(media.encoding.manual.contentType, /application\/pdf, /);
    assert.deepEqual(media.schema.required, ['photo']);
    const photo30 = doc30.paths['/items/{id}/photo'].put.requestBody.content['multipart/form-data'].schema.properties.photo;
    assert.deepEqual([photo30.type, photo30.format, photo30.contentMediaType], ['string', 'binary', undefined]);
  });

  test('security: required guards together, each by any of its schemes; optional auth as anonymous-or-token; schemes in components', () => {
    // auth takes the token as a Bearer header or in the session cookie; csrf wants its token with either.
    assert.deepEqual(op('post', '/items').security, [
      { bearerAuth: [], csrfToken: [] },
      { cookieAuth: [], csrfToken: [] },
    ]);
    assert.deepEqual(op('get', '/items/{id}').security, [{ bearerAuth: [] }, { cookieAuth: [] }]);
    assert.deepEqual(op('put', '/items/{id}/photo').security, [{ apiKeyAuth: [] }]);
    assert.deepEqual(op('get', '/files/{path}').security, [{}, { bearerAuth: [] }, { cookieAuth: [] }]);
    // A public operation says so, as Redocly's recommended rules ask.
    assert.deepEqual(op('get', '/items').security, []);
    assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ['apiKeyAuth', 'bearerAuth', 'cookieAuth', 'csrfToken']);
    const { description, ...bearer } = doc.components.securitySchemes.bearerAuth;
    assert.deepEqual(bearer, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    // Each scheme says where its credential comes from and how it is sent.
    assert.match(description, /issues at sign-in \(jwt_create.*Authorization: Bearer/);
    assert.match(doc.components.securitySchemes.cookieAuth.description, /rvm_session cookie/);
    assert.match(doc.components.securitySchemes.apiKeyAuth.description, /\.secrets\/api_keys.*X-API-Key/);
    assert.match(doc.components.securitySchemes.csrfToken.description, /GET \/_app\/csrf/);
    assert.match(doc30.components.securitySchemes.cookieAuth.description, /rvm_session cookie/, '3.0 keeps the descriptions');
    assert.equal(op('post', '/items')['x-rvm-csrf'], true);
    assert.equal(op('get', '/items/{id}')['x-rvm-csrf'], false);
  });

  test('x-rvm-guards carry every guard with its arguments, mode, origin and responses', () => {
    const guards = op('post', '/items')['x-rvm-guards'] as Doc[];
    assert.deepEqual(
      guards.map((g) => g.name),
      ['auth', 'role', 'rate_limit', 'csrf'],
    );
    assert.deepEqual(guards[1]!.args, ['admin', 'editor']);
    assert.deepEqual(guards[2]!.args, [10, 60]);
    assert.deepEqual(guards[0]!.security, [{ name: 'bearerAuth' }, { name: 'cookieAuth' }]);
    assert.equal(guards[0]!.source, 'plugin');
    assert.ok((guards[2]!.responses as Doc[]).some((r) => r.status === 429 && r.code === 'too_many_requests'));
    const photo = op('put', '/items/{id}/photo')['x-rvm-guards'] as Doc[];
    const minAge = photo.find((g) => g.name === 'min_age')!;
    assert.deepEqual(
      [minAge.args, minAge.source, minAge.origin, minAge.doc],
      [[18], 'app', 'guards.rvm:9', 'Lets through only callers who are at least n years old.'],
    );
    const optional = (op('get', '/files/{path}')['x-rvm-guards'] as Doc[])[0]!;
    assert.deepEqual([optional.mode, optional.responses], ['optional', []]);
    assert.deepEqual(
      (op('delete', '/items/{id}')['x-rvm-guards'] as Doc[]).map((g) => g.args),
      [
        ['10.0.0.0/8', '127.0.0.1'],
        ['08:00', '18:00'],
      ],
    );
  });

  test('responses: inferred successes plus guard, validation and body errors with codes and headers', () => {
    const r = op('post', '/items').responses;
    assert.deepEqual(Object.keys(r), ['201', '400', '401', '403', '413', '415', '422', '429', '500', '503', '4XX']);
    assert.equal(r['201'].content['application/json'].schema.type, 'object');
    const codes = (status: string) => r[status].content['application/json'].schema.allOf[1].properties.code.enum;
    assert.deepEqual(codes('401'), ['unauthorized', 'token_revoked']);
    assert.deepEqual(codes('403'), ['forbidden', 'csrf_invalid']);
    assert.deepEqual(codes('429'), ['too_many_requests']);
    // The role guard: a stored User that cannot be read is not replaced by the token's claims.
    assert.deepEqual(codes('503'), ['database_unavailable']);
    assert.deepEqual(codes('400'), ['bad_request', 'invalid_json']);
    assert.equal(r['401'].content['application/json'].schema.allOf[0].$ref, '#/components/schemas/Error');
    assert.ok(r['401'].headers['WWW-Authenticate']);
    assert.deepEqual(Object.keys(r['429'].headers).sort(), [
      'RateLimit',
      'RateLimit-Limit',
      'RateLimit-Policy',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'Retry-After',
    ]);
    assert.deepEqual(r['422'].content['application/json'].schema, { $ref: '#/components/schemas/ValidationError' });
    assert.match(r['403'].description, /guard `csrf` → `csrf_invalid`/);
    assert.match(r['401'].description, /guard `auth`, guard `role` → `unauthorized`/, 'one line for the guards sharing an error');
    assert.deepEqual(doc.components.schemas.Error.required, ['error', 'code']);
    assert.deepEqual(doc.components.schemas.ValidationError.required, ['error', 'code', 'details']);
  });

  test("every operation lists what any request is refused with before its route runs; a redirect-only route the target's answer", () => {
    for (const { method, path, op: o } of operations(doc))
      assert.deepEqual(o.responses['4XX'], { $ref: '#/components/responses/RequestRefused' }, `${method} ${path}`);
    const refused = doc.components.responses.RequestRefused;
    assert.deepEqual(refused.content['application/json'].schema.allOf[1].properties.code.enum, ['bad_request', 'request_timeout', 'headers_too_large']);
    assert.match(refused.description, /400 `bad_request`, 408 `request_timeout`, 431 `headers_too_large`/);
    // GET /legacy only redirects: there is no 2xx of its own, but a client that follows gets one.
    assert.deepEqual(Object.keys(op('get', '/legacy').responses), ['301', 'default', '4XX']);
    assert.equal(op('get', '/items').responses.default, undefined, 'a route with a success of its own has no default');
    assert.deepEqual(doc30.components.responses.RequestRefused.content['application/json'].schema.allOf[0], { $ref: '#/components/schemas/Error' });
  });

  test('a status answered as JSON by one helper and as text or HTML by others lists each media type with its own schema, helper and line', async (t) => {
    const dir = tempApp(t, {
      'a.rvm': `/// Answers in the format asked for.
route GET /a/:format {
  if params.format == 'text' {
    response.text('plain')
  }
  if params.format == 'html' {
    response.html('<p>html</p>')
  }
  response.ok({ json: true })
}
`,
    });
    const ok = (buildOpenApi(await introspect(dir), { version: '3.1' }) as Doc).paths['/a/{format}'].get.responses['200'];
    assert.deepEqual(Object.keys(ok.content), ['application/json', 'text/html', 'text/plain']);
    assert.deepEqual(ok.content['text/plain'].schema, { type: 'string' });
    assert.deepEqual(ok.content['text/html'].schema, { type: 'string' });
    assert.equal(ok.content['application/json'].schema.type, 'object', 'the JSON body is not mixed with the text ones');
    assert.equal(
      ok.description,
      'OK\n\n- `response.text` (line 4): `text/plain`\n- `response.html` (line 7): `text/html`\n- `response.ok` (line 9): `application/json`',
    );
  });

  test('info.license from rvm.config.json: 3.1 names the SPDX identifier, 3.0 its SPDX page', async (t) => {
    const dir = tempApp(t, { 'rvm.config.json': JSON.stringify({ license: 'Apache-2.0' }), 'a.rvm': 'route GET /a {\n  response.ok(1)\n}\n' });
    const app = await introspect(dir);
    assert.deepEqual((buildOpenApi(app, { version: '3.1' }) as Doc).info.license, { name: 'Apache-2.0', identifier: 'Apache-2.0' });
    assert.deepEqual((buildOpenApi(app, { version: '3.0' }) as Doc).info.license, { name: 'Apache-2.0', url: 'https://spdx.org/licenses/Apache-2.0.html' });
    assert.equal(doc.info.license, undefined, 'none without one in the config');
  });

  test('responses: 204 and redirects have no content; handler errors keep their codes; text and html', () => {
    const photo = op('put', '/items/{id}/photo').responses;
    assert.equal(photo['204'].content, undefined);
    assert.deepEqual(photo['403'].content['application/json'].schema.allOf[1].properties.code.enum, ['forbidden']);
    assert.match(photo['403'].description, /premium plan/);
    assert.ok(op('get', '/legacy').responses['301'].headers.Location);
    assert.equal(op('get', '/legacy').responses['301'].content, undefined);
    assert.deepEqual(op('get', '/items/{id}').responses['404'].content['application/json'].schema.allOf[1].properties.code.enum, ['not_found']);
    assert.deepEqual(op('post', '/claims').responses['409'].content['application/json'].schema.allOf[1].properties.code.enum, ['name_taken']);
    assert.equal(op('get', '/files/{path}').responses['200'].content['text/plain'].schema.type, 'string');
    assert.equal(op('get', '/').responses['200'].content['text/html'].schema.type, 'string');
    assert.equal(op('get', '/items').responses['400'], undefined, 'no body, no body errors');
    assert.deepEqual(op('get', '/items').responses['422'].content['application/json'].schema, { $ref: '#/components/schemas/ValidationError' });
  });

  test('the error code the document lists for a `fail` is the one the server answers with', async (t) => {
    const statuses = [400, 403, 410, 418, 451, 503];
    const dir = tempApp(t, { 'fails.rvm': statuses.map((s) => `route GET /fail${s} {\n  fail ${s}\n}`).join('\n') });
    const app = await loadApp(dir, { cache: false, logger: captureLogger() });
    try {
      const listed = buildOpenApi(await introspect(dir), { version: '3.1' }) as Doc;
      for (const status of statuses) {
        const res = await inject(app, { url: `/fail${status}` });
        assert.equal(res.status, status);
        const documented = listed.paths[`/fail${status}`].get.responses[String(status)].content['application/json'].schema.allOf[1].properties.code.enum;
        assert.deepEqual(documented, [res.json().code], `status ${status}`);
      }
    } finally {
      await app.close();
    }
  });

  test('3.0 rendering: nullable, no 3.1-only keywords, binary files', () => {
    const claims = doc30.paths['/claims'].post.responses;
    assert.deepEqual(claims['200'].content['application/json'].schema, { enum: [null], nullable: true });
    const text = JSON.stringify(doc30);
    for (const keyword of ['"const":', '"contentMediaType":', '"contentEncoding":', '"contains":', '"formatExclusiveMaximum":', '"examples":['])
      assert.ok(!text.includes(keyword), `no ${keyword}`);
    const blob = doc30.paths['/items'].post.requestBody.content['application/json'].schema.properties.blob;
    assert.equal(blob.format, 'byte');
  });
});

/** An app whose own guards and middleware authenticate, without a guard of the auth plugin. */
const SELF_GUARDED: Record<string, string> = {
  '_middleware.rvm': `/// Logs every request.
middleware {
  next()
  log(request.path)
}
`,
  'api/_middleware.rvm': `/// Only callers with a token.
middleware {
  if !request.headers.authorization {
    response.unauthorized('Send a token')
  }
  next()
}
`,
  'api/things.rvm': `/// Things.
route GET /api/things {
  response.ok({ things: [] })
}
`,
  'api/deep/more.rvm': `/// More things, a folder deeper.
route GET /api/more {
  response.ok({ more: true })
}
`,
  'club/_middleware.rvm': `/// Signed-in callers who are not banned.
middleware {
  if auth_user().banned == true {
    response.forbidden('Banned')
  }
  next()
}
`,
  'club/room.rvm': `/// The club room.
route GET /club/room {
  response.ok({ room: true })
}
`,
  'members.rvm': `/// Signed-in callers only.
guard_definition signed_in {
  if auth_user().sub == null {
    fail 403 'A token without a subject'
  }
}

/// The caller, as auth_user() reads it.
fn caller() {
  return auth_user()
}

/// Staff only: reads the caller through a fn, and hands it on.
guard_definition staff {
  who = caller()
  if who.role != 'staff' {
    fail 403 'Staff only'
  }
  state.staff = who
  state['since'] = 2026
}

/// Only from the office.
guard_definition from_office {
  if request.headers['x-office'] != 'yes' {
    fail 403 'Only from the office'
  }
}

/// Members' page.
route GET /members {
  guard signed_in
  response.ok({ ok: true })
}

/// Staff page.
route GET /staff {
  guard staff
  response.ok({ ok: true })
}

/// Office page.
route GET /office {
  guard from_office
  response.ok({ ok: true })
}

/// A token for the caller.
fn token_for(sub) {
  return jwt_create({ sub: sub }, env('JWT_SECRET') ?? '', 3600)
}

/// Signs in.
route POST /login {
  response.ok({ token: token_for('u-1') })
}
`,
};

describe("security of the app's own guards", () => {
  let doc: Doc;
  const op = (method: string, path: string): Doc => doc.paths[path][method];

  test('build the app', async (t) => {
    const dir = tempApp(t, SELF_GUARDED);
    doc = buildOpenApi(await introspect(dir), { version: '3.1' }) as Doc;
  });

  test('a guard_definition calling auth_user(), itself or through a fn, requires the token and lists its 401', () => {
    for (const path of ['/members', '/staff']) {
      const o = op('get', path);
      assert.deepEqual(o.security, [{ bearerAuth: [] }, { cookieAuth: [] }], path);
      assert.deepEqual(o.responses['401'].content['application/json'].schema.allOf[1].properties.code.enum, ['unauthorized', 'token_revoked'], path);
      assert.ok(o.responses['401'].headers['WWW-Authenticate'], path);
      assert.deepEqual(o.responses['403'].content['application/json'].schema.allOf[1].properties.code.enum, ['forbidden'], path);
      assert.deepEqual((o['x-rvm-guards'] as Doc[])[0]!.security, [{ name: 'bearerAuth' }, { name: 'cookieAuth' }], path);
    }
    assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ['bearerAuth', 'cookieAuth']);
  });

  test("a guard_definition's x-rvm-guards entry names the state fields it sets, none for a guard that sets none", () => {
    assert.deepEqual((op('get', '/staff')['x-rvm-guards'] as Doc[])[0]!.state, ['staff', 'since']);
    assert.equal((op('get', '/members')['x-rvm-guards'] as Doc[])[0]!.state, undefined);
  });

  test('a guard_definition that reads no credential stays public, and so does a middleware that answers nothing', () => {
    assert.deepEqual(op('get', '/office').security, []);
    assert.equal(op('get', '/office').responses['401'], undefined);
  });

  test("a middleware's answers and the header it wants a 401 for reach every route under its folder", () => {
    for (const path of ['/api/things', '/api/more']) {
      const o = op('get', path);
      assert.deepEqual(o.security, [{ bearerAuth: [] }], path);
      assert.match(o.responses['401'].description, /`response.unauthorized` \(api\/_middleware.rvm, line 4\)/, path);
      assert.deepEqual(o.responses['401'].content['application/json'].schema.allOf[1].properties.code.enum, ['unauthorized'], path);
    }
  });

  test('a middleware calling auth_user() asks for the session token and lists its answers', () => {
    const o = op('get', '/club/room');
    assert.deepEqual(o.security, [{ bearerAuth: [] }, { cookieAuth: [] }]);
    assert.match(o.responses['401'].description, /`auth_user\(\)` in club\/_middleware.rvm → `unauthorized`/);
    assert.deepEqual(o.responses['403'].content['application/json'].schema.allOf[1].properties.code.enum, ['forbidden']);
    // The guard's own scheme is described as the plugin describes it, whichever route named it first,
    assert.match(doc.components.securitySchemes.bearerAuth.description, /HS256 JWT/);
    // and names the route that issues the token (it calls jwt_create() through a fn).
    assert.match(doc.components.securitySchemes.bearerAuth.description, / Issued by `POST \/login`\.$/);
    assert.doesNotMatch(doc.components.securitySchemes.cookieAuth.description, /Issued by/);
  });
});

describe('the 3.0 downgrade of single schemas', () => {
  test('type lists, const, examples, exclusive bounds, files and unknown keywords', () => {
    const s: Doc = {
      type: 'object',
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      properties: {
        a: { type: ['string', 'null'], examples: ['x', 'y'] },
        b: { const: 3 },
        c: { type: 'number', exclusiveMinimum: 5, exclusiveMaximum: 10, maximum: 8 },
        d: { type: 'string', contentMediaType: 'image/png', 'x-rvm-type': 'file' },
        e: { type: ['integer', 'string'] },
        f: { type: 'array', prefixItems: [{ type: 'string' }] },
      },
    };
    downgradeSchema(s);
    assert.equal(s.$schema, undefined);
    assert.deepEqual(s.properties.a, { type: 'string', nullable: true, example: 'x' });
    assert.deepEqual(s.properties.b, { enum: [3] });
    assert.deepEqual(s.properties.c, { type: 'number', minimum: 5, exclusiveMinimum: true, maximum: 8 });
    assert.deepEqual(s.properties.d, { type: 'string', format: 'binary', 'x-rvm-type': 'file' });
    assert.deepEqual(s.properties.e, { anyOf: [{ type: 'integer' }, { type: 'string' }] });
    assert.deepEqual(s.properties.f, { type: 'array', items: {} });
  });
});

describe('serving the document', () => {
  const ROUTE_V1 = `/// Version one.\nroute GET /a {\n  response.ok({ n: 1 })\n}\n`;
  const ROUTE_V2 = `/// Version two.\nroute GET /a {\n  response.ok({ n: 2 })\n}\nroute GET /b {\n  response.ok(2)\n}\n`;

  async function withApp(
    t: TestCleanup,
    files: Record<string, string>,
    options: { dev: boolean; logger?: CaptureLogger },
    body: (app: App, dir: string) => Promise<void>,
  ): Promise<void> {
    const dir = tempApp(t, files);
    const instance = await loadApp(dir, { cache: false, dev: options.dev, logger: options.logger ?? captureLogger() });
    try {
      await body(instance, dir);
    } finally {
      await instance.close();
    }
  }

  test('openapi.json: JSON, no-cache, ETag and 304; a changed file shows on the next request', async (t) => {
    await withApp(t, { 'a.rvm': ROUTE_V1 }, { dev: true }, async (app, dir) => {
      const first = await inject(app, { url: '/_app/rest-api/openapi.json' });
      assert.equal(first.status, 200);
      assert.match(String(first.headers['content-type']), /^application\/json/);
      assert.equal(first.headers['cache-control'], 'no-cache');
      const etag = String(first.headers.etag);
      assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
      const doc = first.json() as Doc;
      assert.equal(doc.paths['/a'].get.summary, 'Version one.');
      assert.equal(doc['x-rvm-generation'], 0);
      const again = await inject(app, { url: '/_app/rest-api/openapi.json', headers: { 'if-none-match': etag } });
      assert.equal(again.status, 304);
      assert.equal(again.body, '');
      assert.equal(again.headers.etag, etag);

      writeFileSync(join(dir, 'a.rvm'), ROUTE_V2);
      await app.reload();
      const changed = await inject(app, { url: '/_app/rest-api/openapi.json', headers: { 'if-none-match': etag } });
      assert.equal(changed.status, 200);
      assert.notEqual(changed.headers.etag, etag);
      const doc2 = changed.json() as Doc;
      assert.equal(doc2.paths['/a'].get.summary, 'Version two.');
      assert.ok(doc2.paths['/b']);
      assert.equal(doc2['x-rvm-generation'], 1);
      await assertValidOpenApi(doc2, 'served');
    });
  });

  test("a reload re-reads rvm.config.json: the document's title and version follow it", async (t) => {
    await withApp(t, { 'a.rvm': ROUTE_V1, 'rvm.config.json': JSON.stringify({ name: 'Notes', version: '1.0.0' }) }, { dev: true }, async (app, dir) => {
      const first = (await inject(app, { url: '/_app/rest-api/openapi.json' })).json() as Doc;
      assert.deepEqual([first.info.title, first.info.version], ['Notes', '1.0.0']);
      writeFileSync(join(dir, 'rvm.config.json'), JSON.stringify({ name: 'Notes API', version: '1.1.0' }));
      await app.reload();
      const second = (await inject(app, { url: '/_app/rest-api/openapi.json' })).json() as Doc;
      assert.deepEqual([second.info.title, second.info.version], ['Notes API', '1.1.0']);
    });
  });

  test('with the watcher, a changed plugin file is announced once: plugins load once per process', async (t) => {
    const log = captureLogger();
    const plugin = "export default { name: 'p', version: '1.0.0', setup() {} }\n";
    const files = { 'a.rvm': ROUTE_V1, 'plugin.mjs': plugin, 'rvm.config.json': JSON.stringify({ plugins: ['./plugin.mjs'] }) };
    await withApp(t, files, { dev: true, logger: log }, async (app, dir) => {
      app.watch();
      for (let i = 0; i < 3; i++) writeFileSync(join(dir, 'plugin.mjs'), `${plugin}// ${i}\n`);
      for (let i = 0; i < 100 && !log.lines.some((l) => l.includes('plugin.mjs changed')); i++) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(
        log.lines.filter((l) => l.includes('plugin.mjs changed: plugins are loaded once per process; restart rvm run')).length,
        1,
        log.lines.join('\n'),
      );
    });
  });

  test('with the watcher, an edit shows on a following request without an explicit reload', async (t) => {
    await withApp(t, { 'a.rvm': ROUTE_V1 }, { dev: true }, async (app, dir) => {
      app.watch();
      const before = (await inject(app, { url: '/_app/rest-api/openapi.json' })).json() as Doc;
      writeFileSync(join(dir, 'a.rvm'), ROUTE_V2);
      let doc = before;
      for (let i = 0; i < 100 && doc.paths['/b'] === undefined; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        doc = (await inject(app, { url: '/_app/rest-api/openapi.json' })).json() as Doc;
      }
      assert.ok(doc.paths['/b'], 'the new route is documented');
      assert.ok(doc['x-rvm-generation'] > before['x-rvm-generation']);
    });
  });

  test('a failed reload keeps the last good routes and lists its diagnostics in x-rvm-errors', async (t) => {
    await withApp(t, { 'a.rvm': ROUTE_V1 }, { dev: true }, async (app, dir) => {
      writeFileSync(join(dir, 'a.rvm'), 'route GET /a {\n  response.ok(nope(1))\n}\n');
      await app.reload();
      const doc = (await inject(app, { url: '/_app/rest-api/openapi.json' })).json() as Doc;
      assert.equal(doc.paths['/a'].get.summary, 'Version one.');
      assert.equal(doc['x-rvm-errors'].length, 1);
      assert.equal(doc['x-rvm-errors'][0].file, 'a.rvm');
      assert.equal(typeof doc['x-rvm-errors'][0].code, 'string');
      await assertValidOpenApi(doc, 'with errors');
    });
  });

  test('the rendering is built once per generation and served from cache', async (t) => {
    await withApp(t, { 'a.rvm': ROUTE_V1 }, { dev: true }, async (app) => {
      const intro = app.introspection;
      const a = renderedSpec(intro, '3.1', 'json');
      assert.equal(renderedSpec(intro, '3.1', 'json'), a);
      assert.notEqual(renderedSpec(intro, '3.0', 'json').etag, a.etag);
      await app.reload();
      assert.notEqual(renderedSpec(intro, '3.1', 'json'), a);
    });
  });

  test('?version=3.0 and openapi.yaml; a bad version is refused', async (t) => {
    await withApp(t, { 'a.rvm': ROUTE_V1 }, { dev: true }, async (app) => {
      const v30 = (await inject(app, { url: '/_app/rest-api/openapi.json?version=3.0' })).json() as Doc;
      assert.equal(v30.openapi, '3.0.3');
      const yaml = await inject(app, { url: '/_app/rest-api/openapi.yaml' });
      assert.equal(yaml.status, 200);
      assert.match(String(yaml.headers['content-type']), /^application\/yaml/);
      assert.equal((parseYaml(yaml.body) as Doc).openapi, '3.1.0');
      const yaml30 = await inject(app, { url: '/_app/rest-api/openapi.yaml?version=3.0' });
      assert.equal((parseYaml(yaml30.body) as Doc).openapi, '3.0.3');
      const bad = await inject(app, { url: '/_app/rest-api/openapi.json?version=2.0' });
      assert.equal(bad.status, 400);
      assert.equal(bad.json().code, 'unsupported_openapi_version');
    });
  });

  test('production: 404 unless enabled; reference: false turns it off in dev too', async (t) => {
    const urls = ['/_app/rest-api/openapi.json', '/_app/rest-api/openapi.yaml', '/_app/rest-api/events', '/_app/rest-api'];
    await withApp(t, { 'a.rvm': ROUTE_V1 }, { dev: false }, async (app) => {
      for (const url of urls) {
        const res = await inject(app, { url });
        assert.equal(res.status, 404, url);
        assert.equal(res.json().code, 'not_found');
      }
    });
    await withApp(t, { 'a.rvm': ROUTE_V1, 'rvm.config.json': '{"reference": true}' }, { dev: false }, async (app) => {
      assert.equal((await inject(app, { url: '/_app/rest-api/openapi.json' })).status, 200);
    });
    await withApp(t, { 'a.rvm': ROUTE_V1, 'rvm.config.json': '{"reference": {"enabled": false}}' }, { dev: true }, async (app) => {
      assert.equal((await inject(app, { url: '/_app/rest-api/openapi.json' })).status, 404);
    });
  });

  test('production behind HTTP Basic: 401 with the challenge, 200 with the password from .secrets/', async (t) => {
    const config = JSON.stringify({ reference: { enabled: true, basic: { user: 'docs', password_secret: 'reference_password' } } });
    await withApp(t, { 'a.rvm': ROUTE_V1, 'rvm.config.json': config }, { dev: false }, async (app, dir) => {
      const url = '/_app/rest-api/openapi.json';
      const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
      const unconfigured = await inject(app, { url, headers: basic('docs', 'hunter2') });
      assert.equal(unconfigured.status, 500);
      assert.equal(unconfigured.json().code, 'reference_auth_not_configured');
      mkdirSync(join(dir, '.secrets'), { recursive: true });
      writeFileSync(join(dir, '.secrets', 'reference_password'), 'hunter2\n');
      const anonymous = await inject(app, { url });
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.json().code, 'unauthorized');
      assert.equal(anonymous.headers['www-authenticate'], 'Basic realm="API reference"');
      assert.equal((await inject(app, { url, headers: basic('docs', 'wrong') })).status, 401);
      assert.equal((await inject(app, { url, headers: basic('other', 'hunter2') })).status, 401);
      assert.equal((await inject(app, { url, headers: { authorization: 'Basic !!!' } })).status, 401);
      assert.equal((await inject(app, { url, headers: basic('docs', 'hunter2') })).status, 200);
    });
  });

  test('a malformed reference config is a plugin setup error', async (t) => {
    for (const reference of [
      '"yes"',
      '{"enabled": "yes"}',
      '{"basci": {}}',
      '{"basic": {"user": "a"}}',
      '{"basic": {"user": "a", "password_secret": "../x"}}',
    ]) {
      const dir = tempApp(t, { 'a.rvm': ROUTE_V1, 'rvm.config.json': `{"reference": ${reference}}` });
      await assert.rejects(
        loadApp(dir, { cache: false, logger: captureLogger() }),
        (e: Error & { code?: string }) => e.code === 'E_PLUGIN_SETUP' || e.code === 'E_CONFIG',
        reference,
      );
    }
  });

  test('events: retry, then one reload event per reload attempt with the error count; unsubscribed on close', async (t) => {
    await withApp(t, { 'a.rvm': ROUTE_V1 }, { dev: true }, async (app, dir) => {
      const server = await startServer(app, { port: 0, host: '127.0.0.1' });
      try {
        let text = '';
        let closed!: () => void;
        const gone = new Promise<void>((resolve) => (closed = resolve));
        await new Promise<void>((resolve, reject) => {
          const req = request(`${server.url}/_app/rest-api/events`, (res) => {
            assert.equal(res.statusCode, 200);
            assert.equal(res.headers['content-type'], 'text/event-stream');
            res.setEncoding('utf8');
            let step = 0;
            res.on('data', (chunk: string) => {
              text += chunk;
              if (step === 0 && text.includes('retry: 1000\n\n')) {
                step = 1;
                void app.reload();
              } else if (step === 1 && text.includes('"generation":1')) {
                step = 2;
                writeFileSync(join(dir, 'a.rvm'), 'route GET /a {\n  response.ok(nope(1))\n}\n');
                void app.reload();
              } else if (step === 2 && text.includes('"generation":2')) {
                req.destroy();
                resolve();
              }
            });
            res.on('close', () => closed());
          });
          req.on('error', (e) => (/aborted|socket hang up/.test(e.message) ? resolve() : reject(e)));
          req.end();
        });
        assert.match(text, /^retry: 1000\n\n/);
        assert.match(text, /event: reload\ndata: \{"generation":1,"errors":0\}\n\n/);
        assert.match(text, /event: reload\ndata: \{"generation":2,"errors":1\}\n\n/);
        await gone;
        for (let i = 0; i < 50 && openEventStreams(app.introspection) > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
        assert.equal(openEventStreams(app.introspection), 0, 'the stream was released when the client left');
      } finally {
        await server.close();
      }
    });
  });

  test('HEAD of the events endpoint opens no stream', async (t) => {
    await withApp(t, { 'a.rvm': ROUTE_V1 }, { dev: true }, async (app) => {
      const res = await inject(app, { method: 'HEAD', url: '/_app/rest-api/events' });
      assert.equal(res.status, 200);
      assert.equal(openEventStreams(app.introspection), 0);
    });
  });
});
