/**
 * Records in the reference: every `type` is a schema in `components/schemas` (hidden fields left
 * out, `id`/`created_at`/`updated_at` typed, field docs and validator keywords kept), and routes
 * answering records, lists of records or pages of them reference it.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../../tools/host.js';
import { introspectBuild } from '../../vm/runtime/introspect-build.js';
import { buildOpenApi } from '../../stdlib/reference/openapi.js';
import type { AppIntrospection } from '../../plugins/sdk.js';
import { RECORDS_APP, assertValidOpenApi, assertValidSchemas31 } from './reference-fixtures.js';
import { tempApp, type TestCleanup } from '../support/temp-app.js';

type Doc = Record<string, any>;

async function introspect(t: TestCleanup, files: Record<string, string>): Promise<AppIntrospection> {
  const dir = tempApp(t, files);
  const build = await buildApp(dir, { cache: false });
  assert.ok(build.linked !== null, build.diagnostics.map((d) => `${d.file}:${d.line} ${d.code} ${d.message}`).join('; '));
  return introspectBuild(build);
}

function okSchema(doc: Doc, path: string, method: string, status: string): Doc {
  return doc.paths[path][method].responses[status].content['application/json'].schema;
}

describe('records in the OpenAPI document', () => {
  test('every type is a component schema: hidden fields left out, system fields typed, docs and keywords kept', async (t) => {
    const doc = buildOpenApi(await introspect(t, RECORDS_APP), { version: '3.1' }) as Doc;
    const user = doc.components.schemas.User;
    assert.equal(user.type, 'object');
    assert.equal(user.description, 'Someone who signs in.');
    assert.deepEqual(Object.keys(user.properties), ['id', 'email', 'name', 'role', 'age', 'created_at', 'updated_at']);
    assert.equal(user.properties.password_hash, undefined);
    assert.doesNotMatch(JSON.stringify(doc), /password_hash/);
    assert.equal(user.properties.id.format, 'uuid');
    assert.equal(user.properties.created_at.format, 'date-time');
    assert.equal(user.properties.updated_at.format, 'date-time');
    assert.equal(user.properties.email.format, 'email');
    assert.equal(user.properties.email.description, 'Where we write to.');
    assert.equal(user.properties.name.minLength, 2);
    assert.deepEqual(user.properties.role.enum, ['user', 'admin']);
    assert.equal(user.properties.age.minimum, 0);
    // A stored record's JSON form holds every visible field; an optional one without a default is null when unset.
    assert.deepEqual(user.required, ['id', 'email', 'name', 'role', 'age', 'created_at', 'updated_at']);
    assert.deepEqual(user.properties.age.type, ['integer', 'null']);
    assert.equal(user.properties.role.type, 'string', 'a defaulted field is never null');
    assert.deepEqual(user.properties.role.enum, ['user', 'admin']);
    assert.deepEqual(
      user.properties.email['x-rvm-decorators'].map((d: Doc) => d.name),
      ['email', 'unique'],
    );
  });

  test('an optional field allows null: in 3.0 as nullable, its enum listing null', async (t) => {
    const introspection = await introspect(t, { 'types.rvm': "type Task {\n  title: text\n  state?: text @one_of('open', 'done')\n  due?: date\n}\n" });
    const task = (buildOpenApi(introspection, { version: '3.1' }) as Doc).components.schemas.Task;
    assert.deepEqual(task.properties.state.type, ['string', 'null']);
    assert.deepEqual(task.properties.state.enum, ['open', 'done', null]);
    assert.deepEqual(task.properties.due.type, ['string', 'null']);
    assert.equal(task.properties.title.type, 'string');
    const task30 = (buildOpenApi(introspection, { version: '3.0' }) as Doc).components.schemas.Task;
    assert.equal(task30.properties.state.type, 'string');
    assert.equal(task30.properties.state.nullable, true);
    assert.deepEqual(task30.properties.state.enum, ['open', 'done', null]);
    assert.equal(task30.properties.title.nullable, undefined);
  });

  test('routes answering a record, a list or a page reference the schema', async (t) => {
    const doc = buildOpenApi(await introspect(t, RECORDS_APP), { version: '3.1' }) as Doc;
    assert.deepEqual(okSchema(doc, '/users', 'post', '201'), { $ref: '#/components/schemas/User' });
    assert.deepEqual(okSchema(doc, '/users/{id}', 'get', '200'), { $ref: '#/components/schemas/User' });
    // Unchecked, T.find answers null when no record has the id.
    assert.deepEqual(okSchema(doc, '/maybe/{id}', 'get', '200'), { anyOf: [{ $ref: '#/components/schemas/User' }, { type: 'null' }] });
    assert.deepEqual(okSchema(doc, '/users', 'get', '200'), { type: 'array', items: { $ref: '#/components/schemas/User' } });
    const page = okSchema(doc, '/pages', 'get', '200');
    assert.deepEqual(page.properties.items, { type: 'array', items: { $ref: '#/components/schemas/User' } });
    assert.deepEqual(page.properties.next, { type: ['string', 'null'] });
    assert.deepEqual(page.required, ['items', 'next']);
    assert.doesNotMatch(JSON.stringify(doc), /x-rvm-record/);
  });

  test('a type named like a shared schema gets its own name and the shared one is kept', async (t) => {
    const doc = buildOpenApi(await introspect(t, RECORDS_APP), { version: '3.1' }) as Doc;
    assert.equal(doc.components.schemas.Error.description, 'The error body every rvm error response has.');
    assert.ok(doc.components.schemas.ErrorRecord.properties.message);
    assert.deepEqual(okSchema(doc, '/errors', 'get', '200'), { $ref: '#/components/schemas/ErrorRecord' });
  });

  test('the document with records is valid OpenAPI, 3.1 and 3.0', async (t) => {
    const app = await introspect(t, RECORDS_APP);
    const doc31 = buildOpenApi(app, { version: '3.1' }) as Doc;
    await assertValidOpenApi(doc31, 'records 3.1');
    assertValidSchemas31(doc31);
    const doc30 = buildOpenApi(app, { version: '3.0' }) as Doc;
    await assertValidOpenApi(doc30, 'records 3.0');
    assert.deepEqual(okSchema(doc30, '/pages', 'get', '200').properties.next, { type: 'string', nullable: true });
    // 3.0 has no null type: a record that may be null is a nullable object adding to the $ref.
    assert.deepEqual(okSchema(doc30, '/maybe/{id}', 'get', '200'), { allOf: [{ $ref: '#/components/schemas/User' }], type: 'object', nullable: true });
  });

  test("a type declared in the route's own file is referenced too; without types it stays inline, unmarked", async (t) => {
    const app = await introspect(t, {
      'notes.rvm': `type Note {\n  body: text\n  secret: text @hidden\n}\n\nroute GET /notes/:id {\n  response.ok(Note.create({ body: 'b', secret: 's' }))\n}\n`,
    });
    const doc = buildOpenApi(app, { version: '3.1' }) as Doc;
    assert.deepEqual(okSchema(doc, '/notes/{id}', 'get', '200'), { $ref: '#/components/schemas/Note' });
    const { types: _types, ...withoutTypes } = app;
    const bare = buildOpenApi(withoutTypes as AppIntrospection, { version: '3.1' }) as Doc;
    assert.equal(bare.components.schemas.Note, undefined);
    const inline = okSchema(bare, '/notes/{id}', 'get', '200');
    assert.equal(inline.properties.id.format, 'uuid');
    assert.equal(inline.properties.secret, undefined);
    assert.equal(inline['x-rvm-record'], undefined);
  });

  test("the reference page shows a record answer by its type name with the schema's fields, hidden ones absent", async (t) => {
    const doc = buildOpenApi(await introspect(t, RECORDS_APP), { version: '3.1' }) as Doc;
    const asset = async <T>(name: string): Promise<T> => (await import(new URL(`../../../stdlib/reference/assets/${name}`, import.meta.url).href)) as T;
    const { routesOf } = await asset<{ routesOf(doc: unknown): { key: string }[] }>('model.js');
    const { renderDetails } = await asset<{ renderDetails(doc: unknown, route: unknown): string }>('render.js');
    const route = routesOf(doc).find((r) => r.key === 'GET /users/{id}');
    assert.ok(route, 'the page lists GET /users/{id}');
    const html = renderDetails(doc, route);
    assert.match(html, /application\/json · User</);
    for (const field of ['id', 'email', 'name', 'role', 'age', 'created_at', 'updated_at']) assert.match(html, new RegExp(`>${field}<`), field);
    assert.doesNotMatch(html, /password_hash/);
  });
});
