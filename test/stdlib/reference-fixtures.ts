/**
 * Shared by the OpenAPI tests: a generated app covering every field type, guard kind, body kind,
 * query and wildcard, and the standard validators that judge an exported document.
 */
import assert from 'node:assert/strict';
import { validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';

/** Record types (one with a hidden field, one named like a shared schema) and a route per kind of record answer, types and routes in separate files. */
export const RECORDS_APP: Record<string, string> = {
  'types.rvm': `/// Someone who signs in.
type User {
  /// Where we write to.
  email: text @email @unique
  name: text @minLength(2)
  password_hash: text @hidden
  role?: text @one_of('user', 'admin') @default('user')
  age?: int @min(0) @index
}

/// Clashes with the shared error schema's name.
type Error {
  message: text
}
`,
  'users.rvm': `route POST /users {
  validate {
    email: text @email
    name: text
  }
  user = User.create({ email: body.email, name: body.name, password_hash: 'x' })
  response.created(user)
}

route GET /users/:id {
  user = User.find(params.id)
  if !user {
    fail 404
  }
  response.ok(user)
}

route GET /maybe/:id {
  response.ok(User.find(params.id))
}

route GET /users {
  response.ok(User.where({ role: 'user' }, { order: '-created_at', limit: 20 }))
}

route GET /pages {
  response.ok(User.page({}, { limit: 20 }))
}

route GET /errors {
  response.ok(Error.create({ message: 'x' }))
}
`,
};

/** Every field type, every guard kind (plugin and app, with arguments, optional), multipart, query, wildcard, ANY. */
export const KITCHEN_SINK: Record<string, string> = {
  'rvm.config.json': JSON.stringify({ name: 'Kitchen sink', version: '2.1.0' }),
  'guards.rvm': `/// Lets only callers on the premium plan through.
guard_definition premium_user {
  if lower(request.headers['x-plan'] ?? '') != 'premium' {
    fail 403 'Premium required'
  }
}

/// Lets through only callers who are at least n years old.
guard_definition min_age(n) {
  age = int(request.headers['x-age'])
  if age == null || age < n {
    fail 403 "You must be at least \${n} years old"
  }
}
`,
  'items.rvm': `/// Lists items.
/// Filter with q; page counts from 1.
route GET /items {
  query {
    /// Search text.
    q?: text @minLength(1) @maxLength(50)
    page?: int @min(1) @default(1)
    ratio?: number @range(0, 1)
    active?: bool
    tags?: list @max(5)
    since?: date @after('2020-01-01')
    at?: datetime
  }
  response.ok([{ id: 1, name: 'apple' }])
}

/// One item.
route GET /items/:id {
  guard auth
  if params.id == '0' {
    response.not_found('No such item')
  }
  response.ok({ id: params.id, name: 'apple', price: 1.5, tags: ['a'] })
}

/// Creates an item.
route POST /items {
  guards {
    auth: required
    role('admin', 'editor'): required
    rate_limit(10, 60): required
    csrf: required
  }
  validate {
    /// The display name.
    name: text @minLength(2) @alpha
    email?: text @email
    price: number @min(0) @multiple_of(0.01)
    qty: int @range(1, 100) @default(1)
    kind: text @one_of('a', 'b')
    extra?: object
    tags?: list @contains('x')
    payload?: text @json
    blob?: text @base64
    when?: datetime @before('2100-01-01T00:00:00Z')
    day?: date
    flag?: bool
  }
  response.created(body)
}

/// Uploads the item's photo.
route PUT /items/:id/photo {
  guard api_key
  guard premium_user
  guard min_age(18)
  validate {
    photo: file @image @max_size('2mb')
    manual?: file @document
    sheet?: file @mime('application/pdf') @extension('pdf')
    caption?: text @maxLength(200)
  }
  response.no_content()
}

route DELETE /items/:id {
  guard ip('10.0.0.0/8', '127.0.0.1')
  guard time('08:00', '18:00')
  response.no_content()
}

route PATCH /items/:id {
  guard method('PATCH')
  response.redirect('/items')
}
`,
  'misc.rvm': `/// Serves a file below /files/.
route GET /files/*path {
  guards {
    auth: optional
  }
  response.text("contents of \${params.path}")
}

route ANY /anything {
  response.ok({ method: request.method })
}

route GET / {
  response.html('<p>home</p>')
}

route GET /legacy {
  response.redirect('/items', 301)
}

route POST /claims {
  validate {
    name: text
  }
  if body.name == 'taken' {
    response { status: 409 json: { error: 'That name is taken', code: 'name_taken' } }
  }
  if body.name == 'nothing' {
    response.ok(null)
  }
  response.created({ name: body.name, note: null })
}
`,
};

/** Fails with the validator's messages unless `doc` is a valid OpenAPI document (3.0 or 3.1). */
export async function assertValidOpenApi(doc: object, label: string): Promise<void> {
  const result = await validate(structuredClone(doc) as never);
  if (!result.valid) assert.fail(`${label}: ${result.errors.map((e) => e.message).join('\n')}`);
}

const ajv = new Ajv2020({ strict: false, validateFormats: false });

/** Every schema of a 3.1 document, with where it is: components, parameters, bodies, responses, headers. */
export function schemasOf(doc: Record<string, any>): { at: string; schema: Record<string, unknown> }[] {
  const out: { at: string; schema: Record<string, unknown> }[] = [];
  for (const [name, s] of Object.entries(doc.components?.schemas ?? {})) out.push({ at: `components.${name}`, schema: s as Record<string, unknown> });
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item as Record<string, any>)) {
      const at = `${method} ${path}`;
      for (const p of op.parameters ?? []) out.push({ at: `${at} param ${p.name}`, schema: p.schema });
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) out.push({ at: `${at} body ${type}`, schema: (media as any).schema });
      for (const [status, r] of Object.entries(op.responses ?? {})) {
        for (const [type, media] of Object.entries((r as any).content ?? {})) out.push({ at: `${at} ${status} ${type}`, schema: (media as any).schema });
        for (const [name, h] of Object.entries((r as any).headers ?? {})) out.push({ at: `${at} ${status} header ${name}`, schema: (h as any).schema });
      }
    }
  }
  return out;
}

/** Fails unless every schema of a 3.1 document is valid JSON Schema 2020-12 (the validator above does not look inside schemas). */
export function assertValidSchemas31(doc: Record<string, any>): void {
  for (const { at, schema } of schemasOf(doc)) {
    assert.ok(ajv.validateSchema(schema), `${at}: ${ajv.errorsText(ajv.errors)}`);
  }
}
