/**
 * `rvm routes` and `rvm check` know records: routes prints a table of the record types with
 * their fields and hidden/unique/index marks, check reports record diagnostics (unknown fields
 * in constant filters and options, bad field decorators) at `file:line:col` and counts types.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../../tools/host.js';
import { typeRows } from '../../tools/commands/routes.js';
import { rvm } from '../support/rvm-command.js';

const TYPES = `type User {
  email: text @email @unique
  name: text
  password_hash: text @hidden
  role?: text @index @default('user')
}

type Note {
  body: text
}
`;

const ROUTES = `route GET /users {
  response.ok(User.where({ role: 'user' }))
}
`;

describe('rvm routes and rvm check with records', () => {
  let dir = '';
  let clean = '';
  let broken = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-records-cli-'));
    clean = join(dir, 'clean');
    mkdirSync(clean);
    writeFileSync(join(clean, 'types.rvm'), TYPES);
    writeFileSync(join(clean, 'users.rvm'), ROUTES);
    broken = join(dir, 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, 'types.rvm'), TYPES);
    writeFileSync(
      join(broken, 'users.rvm'),
      `route GET /users {\n  response.ok(User.where({ rol: 'user' }))\n}\n\nroute GET /sorted {\n  response.ok(User.where({}, { order: '-nme' }))\n}\n`,
    );
    writeFileSync(join(broken, 'extra.rvm'), 'type Tag {\n  label: text @no_such_rule\n}\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('routes: the types table lists every field with its kind and marks, types by name', async () => {
    const build = await buildApp(clean, { cache: false });
    assert.deepEqual(typeRows(build.modules), [
      ['TYPE', 'FIELD', 'KIND', 'MARKS', 'SOURCE'],
      ['Note', 'body', 'text', '-', 'types.rvm:8'],
      ['User', 'email', 'text', 'unique', 'types.rvm:1'],
      ['', 'name', 'text', '-', ''],
      ['', 'password_hash', 'text', 'hidden', ''],
      ['', 'role?', 'text', 'index', ''],
    ]);
  });

  test('routes: the CLI prints the routes, then the types, then both counts', async () => {
    const r = await rvm(['routes', clean]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^GET\s+\/users\s+-\s+users\.rvm:1$/m);
    assert.match(r.stdout, /^TYPE\s+FIELD\s+KIND\s+MARKS\s+SOURCE$/m);
    assert.match(r.stdout, /^User\s+email\s+text\s+unique\s+types\.rvm:1$/m);
    assert.match(r.stdout, /^\s+password_hash\s+text\s+hidden$/m);
    assert.match(r.stdout, /^1 route and 2 types in 2 files$/m);
  });

  test('routes: an app without types prints no types table', async () => {
    const plain = join(dir, 'plain');
    mkdirSync(plain, { recursive: true });
    writeFileSync(join(plain, 'a.rvm'), 'route GET /a {\n  response.ok(1)\n}\n');
    assert.deepEqual(typeRows((await buildApp(plain, { cache: false })).modules), []);
    const r = await rvm(['routes', plain]);
    assert.doesNotMatch(r.stdout, /TYPE/);
    assert.match(r.stdout, /^1 route in 1 file$/m);
  });

  test('check: a clean app with records counts its types', async () => {
    const r = await rvm(['check', clean]);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^ok: no problems in 2 files \(1 route, 2 types\)$/m);
  });

  test('check: record mistakes are located errors with the nearest name', async () => {
    const r = await rvm(['check', broken]);
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /^users\.rvm:2:\d+: error E_RECORD_QUERY: .*rol/m);
    assert.match(r.stdout, /role/, 'the hint names the nearest field');
    assert.match(r.stdout, /^users\.rvm:6:\d+: error E_RECORD_QUERY: .*nme/m);
    assert.match(r.stdout, /^extra\.rvm:2:\d+: error E_UNKNOWN_VALIDATOR: /m);
    assert.match(r.stdout, /^failed: 3 errors, 0 warnings in 3 files/m);
  });
});
