/**
 * Try It's prefilled examples (`stdlib/reference/assets/schema.js`): for a route using the
 * validators that constrain text, numbers, dates and lists, the examples built from the
 * published OpenAPI document pass the server's own validation.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';

interface SchemaModule {
  fieldExamples(doc: unknown, schema: unknown): Record<string, unknown>;
  exampleFor(doc: unknown, schema: unknown, name?: string): unknown;
}

const { fieldExamples, exampleFor } = (await import(new URL('../../../stdlib/reference/assets/schema.js', import.meta.url).href)) as SchemaModule;

const FIELDS = `
    a: text @email
    b: text @url
    c: text @phone
    d: text @uuid
    e: text @min(8) @max(20)
    f: int @range(5, 10)
    g: number @min(0.5) @max(2)
    h: text @one_of('x', 'y')
    i: text @credit_card
    j: text @ip
    k: text @ipv4
    l: text @ipv6
    m: text @slug
    n: text @alphanumeric @minLength(3)
    o: text @alpha
    p: text @numeric
    q: text @lowercase
    r: text @uppercase
    s: text @starts_with('ab')
    t: text @ends_with('.png')
    u: text @contains('@')
    v: text @not_one_of('example')
    w: text @hex
    x: text @base64
    y: text @json
    z: date @after('2031-06-01') @before('2040-01-01')
    aa: datetime
    ab: text @hostname
    ac: int @multiple_of(5) @min(7)
    ad: text @length(4)
    ae: text @same('e')
    af: list @minLength(2)
    ag: text @maxLength(3)
    ai: text @date
    aj: text @datetime
    ak: bool
    al: object
    am: number @multiple_of(0.25) @min(1.1)
    password: text @min(12)
    role: text @one_of('user', 'admin') @default('admin')`;

let dir: string;
let app: Awaited<ReturnType<typeof loadApp>>;
let doc: {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> }; parameters?: { name: string; schema: unknown }[] }>>;
};

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rvm-ref-examples-'));
  writeFileSync(
    join(dir, 'api.rvm'),
    `route POST /all {
  validate {${FIELDS}
  }
  response.created(body)
}
route GET /search {
  query {
    page: int @min(1) @max(50)
    q: text @minLength(3)
    sort: text @one_of('asc', 'desc')
    since: date @after('2031-01-01')
  }
  response.ok(query)
}`,
  );
  app = await loadApp(dir, { cache: false, dev: true, logger: captureLogger() });
  doc = (await inject(app, { url: '/_app/rest-api/openapi.json' })).json();
});

after(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('prefilled examples', () => {
  test('a JSON body built from the examples passes validation', async () => {
    const schema = doc.paths['/all']!.post!.requestBody!.content['application/json']!.schema;
    const body = fieldExamples(doc, schema);
    assert.equal(body.role, 'admin', 'the default is the example');
    assert.equal(body.ae, body.e, '@same copies the other field');
    const res = await inject(app, { method: 'POST', url: '/all', body });
    assert.equal(res.status, 201, res.body);
  });

  test('query examples, sent as text, pass validation', async () => {
    const params = doc.paths['/search']!.get!.parameters!;
    const query = new URLSearchParams(params.map((p): [string, string] => [p.name, String(exampleFor(doc, p.schema, p.name))]));
    const res = await inject(app, { url: `/search?${query}` });
    assert.equal(res.status, 200, res.body);
  });
});
