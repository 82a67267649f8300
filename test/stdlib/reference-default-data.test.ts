/**
 * A list or object `@default` reaches the reference: the OpenAPI `default` of its field (3.1 and
 * 3.0) and the field's decorator arguments, and the document stays valid.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../../tools/host.js';
import { introspectBuild } from '../../vm/runtime/introspect-build.js';
import { buildOpenApi } from '../../stdlib/reference/openapi.js';
import { assertValidOpenApi } from './reference-fixtures.js';
import { tempApp } from '../support/temp-app.js';

const SOURCE = `route POST /v {
  validate {
    tags: list @default(['x', 'y'])
    meta: object @default({a: 1, nested: {b: []}})
  }
  response.ok(body)
}
`;

test('a list or object @default is the OpenAPI default of its field, in 3.1 and 3.0', async (t) => {
  const dir = tempApp(t, { 'v.rvm': SOURCE });
  const build = await buildApp(dir, { cache: false });
  assert.deepEqual(build.diagnostics, []);
  const app = introspectBuild(build);
  const field = app.routes()[0]!.body!.find((f) => f.name === 'tags')!;
  assert.deepEqual(
    field.decorators.map((d) => [d.name, d.args]),
    [['default', [['x', 'y']]]],
  );
  for (const version of ['3.1', '3.0'] as const) {
    const doc = buildOpenApi(app, { version }) as Record<string, any>;
    await assertValidOpenApi(doc, `OpenAPI ${version}`);
    const properties = doc.paths['/v'].post.requestBody.content['application/json'].schema.properties;
    assert.deepEqual(properties.tags.default, ['x', 'y'], version);
    assert.deepEqual(properties.meta.default, { a: 1, nested: { b: [] } }, version);
  }
});
