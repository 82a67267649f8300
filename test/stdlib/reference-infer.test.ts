/**
 * Inference that follows values into the OpenAPI document (spec/plugins/reference.md, "Responses"): a fn's result, a
 * native's declared type, fields set on an object, a `T.find` that may be null, and a route's
 * `@returns` tag.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../../tools/host.js';
import { introspectBuild } from '../../vm/runtime/introspect-build.js';
import { buildOpenApi } from '../../stdlib/reference/openapi.js';
import type { AppIntrospection } from '../../plugins/sdk.js';
import { assertValidOpenApi, assertValidSchemas31 } from './reference-fixtures.js';
import { tempApp, type TestCleanup } from '../support/temp-app.js';

type Doc = Record<string, any>;

const APP: Record<string, string> = {
  'types.rvm': 'type Task {\n  title: text\n  done?: bool\n}\n',
  'helpers.rvm': `fn summary(task) {
  return { title: task.title, count: 3, secret: totp_secret() }
}

fn forever(n) {
  return forever(n)
}
`,
  'routes.rvm': `route GET /summary {
  response.ok(summary(Task.find('x')))
}

route GET /natives {
  response.ok({ secret: totp_secret(), n: int('3'), claims: jwt_verify('t', 'k') })
}

route GET /fields {
  o = {}
  o.total = 3
  if request.query.x {
    o.note = 'x'
  }
  response.ok(o)
}

route GET /tasks/:id {
  task = Task.find(params.id)
  response.ok(task)
}

route GET /checked/:id {
  task = Task.find(params.id)
  if !task {
    fail 404
  }
  response.ok(task)
}

/// One task, by hand.
/// @returns 200 { task: Task, tags?: [text] }
route GET /declared {
  response.ok(json_parse('{}'))
}

route GET /forever {
  response.ok(forever(1))
}
`,
};

async function document(t: TestCleanup, version: '3.1' | '3.0'): Promise<Doc> {
  const dir = tempApp(t, APP);
  const build = await buildApp(dir, { cache: false });
  assert.ok(build.linked !== null, build.diagnostics.map((d) => `${d.file}:${d.line}:${d.col} ${d.code} ${d.message}`).join('; '));
  return buildOpenApi(introspectBuild(build) as AppIntrospection, { version }) as Doc;
}

const ok = (doc: Doc, path: string): Doc => doc.paths[path].get.responses['200'].content['application/json'].schema;
const TASK = { $ref: '#/components/schemas/Task' };

describe('the document follows values', () => {
  test("a route answering a fn's result documents what the fn returns", async (t) => {
    const doc = await document(t, '3.1');
    assert.deepEqual(ok(doc, '/summary'), {
      type: 'object',
      properties: { title: {}, count: { type: 'integer', example: 3 }, secret: { type: 'string' } },
      required: ['title', 'count', 'secret'],
    });
    assert.deepEqual(ok(doc, '/forever'), {}, 'a fn returning its own call resolves to {} and ends');
  });

  test("natives' declared result types: text, int? and object? (null where the native can answer it)", async (t) => {
    const schema = ok(await document(t, '3.1'), '/natives');
    assert.deepEqual(schema.properties, { secret: { type: 'string' }, n: { type: ['integer', 'null'] }, claims: { type: ['object', 'null'] } });
  });

  test('fields set on an object: required when always set, optional when set inside an if', async (t) => {
    const schema = ok(await document(t, '3.1'), '/fields');
    assert.deepEqual(Object.keys(schema.properties), ['total', 'note']);
    assert.deepEqual(schema.required, ['total']);
  });

  test('T.find answered unchecked may be null; after an if tests it, the record alone', async (t) => {
    const doc = await document(t, '3.1');
    assert.deepEqual(ok(doc, '/tasks/{id}'), { anyOf: [TASK, { type: 'null' }] });
    assert.deepEqual(ok(doc, '/checked/{id}'), TASK);
  });

  test('@returns declares the status by hand and stays out of the description', async (t) => {
    const doc = await document(t, '3.1');
    assert.deepEqual(ok(doc, '/declared'), {
      type: 'object',
      properties: { task: TASK, tags: { type: 'array', items: { type: 'string' } } },
      required: ['task'],
    });
    const op = doc.paths['/declared'].get;
    assert.doesNotMatch(`${op.summary} ${op.description}`, /@returns/);
  });

  test("@returns naming a type no file declares is E_RETURNS_TAG at the tag's line, with the nearest type as a hint; one in another file is fine", async (t) => {
    const dir = tempApp(t, {
      'types.rvm': 'type Task {\n  title: text\n}\n',
      'routes.rvm':
        '/// One.\n/// @returns 200 Tsak\nroute GET /one {\n  response.ok({})\n}\n\n/// Two.\n/// @returns 200 [Task]\nroute GET /two {\n  response.ok([])\n}\n',
    });
    const build = await buildApp(dir, { cache: false });
    const found = build.diagnostics.filter((d) => d.code === 'E_RETURNS_TAG');
    assert.deepEqual(
      found.map((d) => [d.file, d.line, d.hint]),
      [['routes.rvm', 2, "did you mean 'Task'?"]],
    );
  });

  test('the document is valid OpenAPI, 3.1 and 3.0', async (t) => {
    const doc31 = await document(t, '3.1');
    await assertValidOpenApi(doc31, 'infer 3.1');
    assertValidSchemas31(doc31);
    const doc30 = await document(t, '3.0');
    await assertValidOpenApi(doc30, 'infer 3.0');
    assert.doesNotMatch(JSON.stringify(doc30), /x-rvm-call/);
  });
});
