import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileSource, sourceHash } from '../../../vm/compiler/compiler.js';
import { simulateMaxStack } from '../bytecode-helpers.js';
import { RECORD_METHODS } from '../../support/record-methods.js';

const OPTIONS = { compilerVersion: '1.0.0', pluginsFingerprint: 'core@1', recordMethods: RECORD_METHODS };

/** A realistic route file exercising every statement and most expression forms. */
const APP = `
/// A registered user.
type User {
  email: text @email
  name?: text @minLength(2)
  role: text @default('user') @one_of('user', 'admin')
  password_hash: text @hidden
}

/// Slug of a title.
fn slugify(title) {
  out = ''
  for ch in lower(trim(title)) {
    if ch == ' ' || ch == '-' { out = out + '-'; continue }
    out = out + ch
  }
  return out
}

fn total(items) {
  sum = 0
  for i, item in items {
    if !item { break }
    sum = sum + (item.price ?? 0) * (item.qty ?? 1)
  }
  return sum
}

guard_definition min_age(n) {
  user = auth_user()
  if (user.age ?? 0) < n { fail 403 'Too young' }
}

/// Create a user.
route POST /api/users {
  guards {
    auth: required
    rate_limit(100, 60 * 1): required
  }
  validate {
    email: text @email
    name: text @minLength(2)
    role?: text @one_of('user', 'admin') @default('user')
  }
  user = User.create(body)
  response.created(user)
}

route GET /users/:id {
  guard min_age(18)
  user = User.find(params.id)
  if user == null { response.not_found("No user \${params.id}") }
  n = 0
  try {
    n = total(user.orders)
  } catch err {
    log("total failed: \${err.message}")
    n = 0
  }
  response.ok({ user: user, total: n, slug: slugify(user.name ?? 'anon'), flags: [n > 10, !user.admin] })
}

route GET /items {
  query {
    page?: int @default(1)
  }
  items = User.all()
  count = 0
  while count < 3 {
    count = count + 1
    if count == 2 { break }
  }
  if query.page > 5 {
    response { status: 400 json: { error: 'too far', code: 'bad_request' } }
  }
  response.ok(items)
}
`;

describe('compileSource', () => {
  test('compiles a realistic file; every chunk has maxStack equal to the true depth over all paths', () => {
    const { module, diagnostics } = compileSource('app/users.rvm', APP, OPTIONS);
    assert.deepEqual(
      diagnostics.filter((d) => d.severity === 'error'),
      [],
    );
    assert.ok(module);
    assert.equal(module.header.sourceHash, sourceHash(APP));
    assert.deepEqual(
      module.chunks.map((c) => c.name),
      ['fn slugify', 'fn total', 'guard min_age', 'route POST /api/users', 'route GET /users/:id', 'route GET /items'],
    );
    for (const chunk of module.chunks) {
      const depth = simulateMaxStack(chunk);
      assert.ok(chunk.maxStack >= depth, `${chunk.name}: maxStack ${chunk.maxStack} < ${depth}`);
      assert.equal(chunk.maxStack, depth, chunk.name);
    }
    const [create, show, items] = module.routes;
    assert.deepEqual(
      create!.guards.map((g) => [g.name, g.args, g.mode]),
      [
        ['auth', [], 'required'],
        ['rate_limit', [100, 60], 'required'],
      ],
    );
    assert.deepEqual(
      create!.responses.map((r) => r.status),
      [201, 422],
    );
    assert.deepEqual((create!.responses[0]!.schema.properties as object & Record<string, unknown>).password_hash, undefined);
    assert.deepEqual(show!.params, ['id']);
    assert.deepEqual(
      show!.responses.map((r) => r.status),
      [200, 404],
    );
    assert.deepEqual(
      items!.responses.map((r) => r.status),
      [200, 400, 422],
    );
    assert.equal(module.types[0]!.doc?.includes('registered user'), true);
  });

  test('diagnostics carry file, line, col and the source line', () => {
    const source = 'fn f() {\n  x = y + 1\n}\n';
    const { module, diagnostics } = compileSource('app/a.rvm', source, OPTIONS);
    assert.equal(module, null);
    assert.deepEqual(
      diagnostics.map((d) => [d.code, d.file, d.line, d.col, d.sourceLine]),
      [['E_UNDEFINED_NAME', 'app/a.rvm', 2, 7, '  x = y + 1']],
    );
  });

  test('a syntax error hides nothing: the declarations that parsed are compiled, and only a partial module results', () => {
    const source =
      'route GET /x {\n  log(nope)\n}\nroute GET /y {\n  y = (1 + )\n  response.ok(y)\n}\nfn f(a b) {\n}\nroute GET /z {\n  response.ok(f(1))\n}\n';
    const { module, partial, unparsed, diagnostics } = compileSource('app/c.rvm', source, OPTIONS);
    assert.equal(module, null, 'never a runnable module');
    // /y's broken statement leaves `y` unset: no E_UNDEFINED_NAME for it.
    assert.deepEqual(
      diagnostics.map((d) => `${d.code}@${d.line}:${d.col}`),
      ['E_EXPECTED_EXPRESSION@5:12', 'E_UNEXPECTED_TOKEN@8:8', 'E_UNDEFINED_NAME@2:7'],
    );
    assert.deepEqual(
      partial.routes.map((r) => r.path),
      ['/x', '/z'],
    );
    assert.deepEqual(partial.functions, []);
    assert.deepEqual(unparsed, ['f']);
  });

  test('a second declaration of a name is reported once and not compiled (it would clash again at link)', () => {
    const { module, partial, diagnostics } = compileSource('app/d.rvm', 'fn twice() {\n  return 1\n}\nfn twice() {\n  return 2\n}\n', OPTIONS);
    assert.equal(module, null);
    assert.deepEqual(
      diagnostics.map((d) => d.code),
      ['E_DUPLICATE_DECL'],
    );
    assert.deepEqual(
      partial.functions.map((f) => f.line),
      [1],
    );
  });

  test('a call of something not callable leaves no call for the linker to report again', () => {
    const { partial, diagnostics } = compileSource('app/e.rvm', 'route GET / {\n  n = 1\n  n(2)\n}\n', OPTIONS);
    assert.deepEqual(
      diagnostics.map((d) => d.code),
      ['E_NOT_CALLABLE'],
    );
    assert.deepEqual(partial.chunks[0]!.refs, []);
    assert.equal(partial.chunks[0]!.maxStack, simulateMaxStack(partial.chunks[0]!));
  });

  test('a file that does not parse yields the parse diagnostics and no module', () => {
    const { module, diagnostics } = compileSource('app/b.rvm', 'route GET /x {\n  x = \n', OPTIONS);
    assert.equal(module, null);
    assert.ok(diagnostics.length > 0);
    assert.ok(diagnostics.every((d) => d.severity !== 'error' || !d.code.startsWith('E_UNDEFINED')));
  });
});
