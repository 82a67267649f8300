import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Diagnostic } from '../../../vm/diagnostics.js';
import { tokenize } from '../../../vm/front/lexer.js';
import { parse } from '../../../vm/front/parser.js';
import { compileSource } from '../../../vm/compiler/compiler.js';
import { link } from '../../../vm/interp/link.js';
import { loadPlugins, type PluginRegistry } from '../../../vm/host/registry.js';
import { STANDARD_PLUGINS } from '../../../stdlib/index.js';
import { loadSettings } from '../../../vm/runtime/config.js';

// Realistic route files in the shapes of the seed (§4.2): guards, validation, handlers.
const USERS = `/// Creates a user.
route POST /api/users {
  guards { auth: required, csrf: required }
  validate {
    /// The sign-in address.
    email: text @required @email
    name: text @required @minLength(2)
    role: text @default('user') @one_of('user', 'admin')
  }
  user = User.create(body)
  response.created(user)
}

route POST /api/register {
  guard rate_limit(100, 60)
  validate {
    email: text @required @email
    password: text @required @min(8) @max(128)
    age: int @min(18) @max(120)
    role?: text @one_of('user', 'admin') @default('user')
    website?: text @url
    phone?: text @phone
    avatar: file @image @max_size('5MB')
  }
  hash = argon2_hash(body.password)
  user = User.new({ email: body.email, password: hash, role: body.role ?? 'user' })
  save user
  response.created(user)
}

route GET /api/users/:id {
  guard auth
  query {
    expand?: bool @default(false)
  }
  user = User.find(params.id)
  if user == null { fail 404 "No user \${params.id}" }
  response.ok(user)
}
`;

const PREMIUM = `/// Paying customers only.
guard_definition premium_user {
  user = auth_user()
  if user.plan != 'premium' {
    fail 403 'Premium required'
  }
}

guard_definition min_age(age) {
  if auth_user().age < age { fail 403 "Must be \${age} or older" }
}

route GET /premium {
  guard premium_user
  guard min_age(18)
  response.ok({ content: 'premium stuff' })
}

route GET /auth/google {
  response.redirect(auth_google_login())
}

route GET /auth/google/callback {
  profile = auth_google_callback()
  for k, v in profile { log("\${k}=\${v}") }
  try {
    user = User.find_by({ email: profile.email }) ?? User.create({ email: profile.email, name: profile.name })
  } catch err {
    fail 500 err.message
  }
  response.ok({ email: profile.email, name: profile.name, user: user })
}
`;

const MIDDLEWARE = `/// Checks the API key on every API route.
middleware {
  set_header('X-Powered-By', 'rvm')
  if request.headers['x-api-key'] == null and request.method != 'OPTIONS' {
    response { status: 401 json: { error: 'Missing API key' } }
  }
  started = now()
  next()
  log(request.method + ' ' + request.path + ' ' + text(response.status) + " in \${now() - started}ms")
}
`;

const TYPES = `/* Records and helpers. */
type User {
  /// Unique address.
  email: text @email
  name: text, role: text @one_of('user', 'admin')
  password: text @hidden
}

fn clamp(x, lo, hi) {
  if x < lo { return lo } else if x > hi { return hi }
  return x
}

fn total(items) {
  sum = 0
  i = 0
  while i < len(items) {
    if items[i].skip { i = i + 1; continue }
    sum = sum + items[i].price * (1 - (items[i].discount ?? 0) / 100)
    i = i + 1
  }
  return -sum % 7 >= 0 && not false || null
}

route DELETE /api/items/*path {
  guards {
    api_key: required
    auth: optional
  }
  delete Item.find(params.path)
  response.no_content()
}
`;

const SEEDS: [string, string][] = [
  ['app/users.rvm', USERS],
  ['app/premium.rvm', PREMIUM],
  ['app/api/_middleware.rvm', MIDDLEWARE],
  ['app/types.rvm', TYPES],
];

/** Characters that matter to the lexer and parser, plus some that it must reject. */
const INTERESTING = [
  '{',
  '}',
  '(',
  ')',
  '[',
  ']',
  '"',
  "'",
  '${',
  '\\',
  '\n',
  '/',
  '*',
  '/*',
  '*/',
  '///',
  '@',
  ':',
  ',',
  '.',
  ';',
  '=',
  '==',
  '!',
  '?',
  '#',
  '`',
  '\r',
  '\t',
  '\u0000',
  '😀',
  '\uD800',
  'é',
  'route ',
  'if ',
  'else ',
  'fn ',
  'validate ',
  'guard ',
];

type Mutation =
  | { kind: 'delete'; at: number; len: number }
  | { kind: 'insert'; at: number; text: string }
  | { kind: 'duplicate'; at: number; len: number }
  | { kind: 'swap'; at: number; other: number; len: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'token'; op: 'delete' | 'duplicate' | 'swap'; index: number; other: number }
  | { kind: 'nest'; at: number; open: string; depth: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), len: fc.integer({ min: 1, max: 12 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('insert' as const),
      at: fc.nat(),
      text: fc.oneof(fc.constantFrom(...INTERESTING), fc.string({ unit: 'binary', maxLength: 6 })),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('duplicate' as const), at: fc.nat(), len: fc.integer({ min: 1, max: 40 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('swap' as const), at: fc.nat(), other: fc.nat(), len: fc.integer({ min: 1, max: 10 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('token' as const),
      op: fc.constantFrom('delete' as const, 'duplicate' as const, 'swap' as const),
      index: fc.nat(),
      other: fc.nat(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('nest' as const),
      at: fc.nat(),
      open: fc.constantFrom('(', '[', '{', '"${', '-', 'if a {'),
      depth: fc.integer({ min: 1, max: 3000 }),
    }),
  },
);

function apply(source: string, m: Mutation): string {
  const n = source.length;
  const at = n === 0 ? 0 : 'at' in m ? m.at % (n + 1) : 0;
  switch (m.kind) {
    case 'delete':
      return source.slice(0, at) + source.slice(at + m.len);
    case 'insert':
      return source.slice(0, at) + m.text + source.slice(at);
    case 'duplicate':
      return source.slice(0, at + m.len) + source.slice(at, at + m.len) + source.slice(at + m.len);
    case 'swap': {
      const b = n === 0 ? 0 : m.other % (n + 1);
      const [x, y] = at < b ? [at, b] : [b, at];
      const len = Math.min(m.len, y - x);
      return source.slice(0, x) + source.slice(y, y + len) + source.slice(x + len, y) + source.slice(x, x + len) + source.slice(y + len);
    }
    case 'truncate':
      return source.slice(0, at);
    case 'nest':
      return source.slice(0, at) + m.open.repeat(m.depth) + source.slice(at);
    case 'token': {
      const tokens = tokenize('t.rvm', source).tokens.filter((t) => t.text.length > 0);
      if (tokens.length === 0) return source;
      const t = tokens[m.index % tokens.length]!;
      const u = tokens[m.other % tokens.length]!;
      const [start, end] = [t.offset, t.offset + t.text.length];
      if (m.op === 'delete') return source.slice(0, start) + source.slice(end);
      if (m.op === 'duplicate') return source.slice(0, end) + ' ' + t.text + source.slice(end);
      if (u.offset <= end) return source;
      return source.slice(0, start) + u.text + source.slice(end, u.offset) + t.text + source.slice(u.offset + u.text.length);
    }
  }
}

/** A diagnostic points inside the source: a real line, a column on it (or just past its end). */
function checkLocated(d: Diagnostic, file: string, source: string, lines: string[]): void {
  const where = `${d.code}@${d.line}:${d.col} ${d.message}`;
  assert.equal(d.file, file, where);
  assert.match(d.code, /^[EW]_[A-Z_]+$/, where);
  assert.notEqual(d.code, 'E_INTERNAL', `${where} on ${JSON.stringify(source.slice(0, 300))}`);
  assert.ok(Number.isInteger(d.line) && d.line >= 1 && d.line <= lines.length, where);
  assert.ok(Number.isInteger(d.col) && d.col >= 1 && d.col <= lines[d.line - 1]!.length + 1, where);
  assert.doesNotMatch(d.message, /\n\s+at |\.js:\d+/, `a JS stack trace leaked into ${where}`);
}

/** parse → compile → link: never a throw, every problem a located diagnostic. */
function checkCompile(file: string, source: string, registry: PluginRegistry): void {
  let result: ReturnType<typeof compileSource>;
  try {
    result = compileSource(file, source, { compilerVersion: 'fuzz', pluginsFingerprint: registry.fingerprint });
  } catch (e) {
    assert.fail(`compileSource threw ${String(e)} on ${JSON.stringify(source.slice(0, 300))}`);
  }
  const lines = source.split('\n');
  for (const d of result.diagnostics) checkLocated(d, file, source, lines);
  assert.equal(
    result.module === null,
    result.diagnostics.some((d) => d.severity === 'error'),
    'a module exactly when there is no error',
  );
  if (result.module === null) return;
  let linked: ReturnType<typeof link>;
  try {
    linked = link([result.module], registry);
  } catch (e) {
    assert.fail(`link threw ${String(e)} on ${JSON.stringify(source.slice(0, 300))}`);
  }
  for (const d of linked.diagnostics) checkLocated(d, file, source, lines);
}

/** The invariants every parse must keep, whatever the input. */
function checkParse(file: string, source: string): void {
  let result: ReturnType<typeof parse>;
  try {
    result = parse(file, source);
  } catch (e) {
    assert.fail(`parse threw ${String(e)} on ${JSON.stringify(source.slice(0, 300))}`);
  }
  assert.equal(result.ast.kind, 'File');
  const lines = source.split('\n');
  for (const d of result.diagnostics as Diagnostic[]) {
    const where = `${d.code}@${d.line}:${d.col} ${d.message}`;
    assert.equal(d.file, file, where);
    assert.match(d.code, /^E_[A-Z_]+$/, where);
    assert.notEqual(d.code, 'E_INTERNAL', `${where} on ${JSON.stringify(source.slice(0, 300))}`);
    assert.ok(Number.isInteger(d.line) && d.line >= 1 && d.line <= lines.length, where);
    assert.ok(Number.isInteger(d.col) && d.col >= 1 && d.col <= lines[d.line - 1]!.length + 1, where);
  }
}

const mutatedSeeds = fc
  .record({ seed: fc.constantFrom(...SEEDS.keys()), mutations: fc.array(mutation, { minLength: 1, maxLength: 6 }) })
  .map(({ seed: i, mutations }) => {
    const [file, source] = SEEDS[i]!;
    return { file, source: mutations.reduce(apply, source) };
  });

describe('parser fuzz', () => {
  test('the seed files are valid', () => {
    for (const [file, source] of SEEDS) {
      assert.deepEqual(
        parse(file, source).diagnostics.map((d) => `${d.code}@${d.line}:${d.col} ${d.message}`),
        [],
        file,
      );
    }
  });

  test('1,000 mutated and random sources: parse never throws and diagnostics are well-formed', () => {
    const mutated = mutatedSeeds;
    const random = fc.record({
      file: fc.constantFrom('app/x.rvm', 'app/_middleware.rvm'),
      source: fc.oneof(
        fc.string({ unit: 'binary', maxLength: 200 }),
        fc.array(fc.constantFrom(...INTERESTING, 'a', '1', ' '), { maxLength: 120 }).map((xs) => xs.join('')),
      ),
    });
    fc.assert(
      fc.property(fc.oneof({ weight: 4, arbitrary: mutated }, { weight: 1, arbitrary: random }), ({ file, source }) => checkParse(file, source)),
      { numRuns: 1000 },
    );
  });
});

describe('compiler fuzz', () => {
  test('1,000 mutated route files through parser, compiler and linker: never a throw, always located diagnostics', async () => {
    const registry = await loadPlugins(STANDARD_PLUGINS, loadSettings(null, { config: {} }));
    fc.assert(
      fc.property(mutatedSeeds, ({ file, source }) => checkCompile(file, source, registry)),
      { numRuns: 1000 },
    );
  });
});
