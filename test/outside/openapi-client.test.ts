/**
 * Outside check: a client generated from the showcase's OpenAPI document accepts the
 * server's real answers. openapi-typescript (a devDependency) writes the types of the document;
 * each JSON answer recorded from the running showcase is then written as a constant of the type
 * the document gives its route, status and media type, and tsc (strict) must accept the file —
 * nulls, records, pages and error bodies included.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { App } from '../../vm/runtime/app.js';
import { loadApp } from '../../tools/host.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { buildOpenApi } from '../../stdlib/reference/openapi.js';
import { showcaseCopy } from '../support/showcase.js';
import { answerLog, inject } from '../support/openapi-answers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const OPENAPI_TS = join(ROOT, 'node_modules', '.bin', 'openapi-typescript');
const TSC = join(ROOT, 'node_modules', '.bin', 'tsc');
const API_KEY = { 'x-api-key': 'showcase-key' };

const showcase = showcaseCopy();
let app: App;
let tmp: string;

before(async () => {
  app = await loadApp(showcase.dir, { cache: false, logger: captureLogger() });
  tmp = mkdtempSync(join(tmpdir(), 'rvm-openapi-client-'));
});

after(async () => {
  await app?.close();
  showcase.remove();
  rmSync(tmp, { recursive: true, force: true });
});

/** Answers of many kinds: records with null fields, a page, a list, errors, validation failures, text. */
async function obtainAnswers(): Promise<void> {
  await inject(app, { url: '/hello' });
  await inject(app, { url: '/hello/Ada?shout=1' });
  const created = await inject(app, { method: 'POST', url: '/api/users', headers: API_KEY, body: { email: 'client@example.com', name: 'Client' } });
  assert.equal(created.status, 201, created.body);
  const id = created.json().id as string;
  assert.equal(created.json().age, null, 'an optional field the record has no value for is answered as null');
  await inject(app, { method: 'POST', url: '/api/users', headers: API_KEY, body: { email: 'client@example.com', name: 'Client' } });
  await inject(app, { method: 'POST', url: '/api/users', headers: API_KEY, body: { email: 'not an email', name: 'C' } });
  await inject(app, { url: `/api/users/${id}`, headers: API_KEY });
  await inject(app, { url: '/api/users/01a22142-0000-7000-8000-000000000000', headers: API_KEY });
  await inject(app, { method: 'PATCH', url: `/api/users/${id}`, headers: API_KEY, body: { age: 40 } });
  await inject(app, { url: '/api/users?limit=1', headers: API_KEY });
  await inject(app, { url: '/api/users?after=garbage', headers: API_KEY });
  for (const kind of ['ok', 'created', 'conflict', 'json', 'text', 'custom', 'fail']) await inject(app, { url: `/responses/${kind}` });
}

test('openapi-typescript types of the showcase document accept every recorded JSON answer (tsc --strict)', async () => {
  assert.ok(existsSync(OPENAPI_TS), `${OPENAPI_TS} is missing: openapi-typescript is a devDependency`);
  await obtainAnswers();
  const docFile = join(tmp, 'showcase.json');
  writeFileSync(docFile, JSON.stringify(buildOpenApi(app.introspection, { version: '3.1' })));
  const generated = spawnSync(OPENAPI_TS, [docFile, '-o', join(tmp, 'schema.d.ts')], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, NO_COLOR: '1' },
  });
  assert.equal(generated.status, 0, generated.stderr);

  const lines = ["import type { paths } from './schema';", ''];
  let checked = 0;
  for (const { answer, path, method } of answerLog.located(app)) {
    if (path === null || !answer.contentType?.startsWith('application/json')) continue;
    const type = `paths[${JSON.stringify(path)}][${JSON.stringify(method.toLowerCase())}]['responses'][${answer.status}]['content']['application/json']`;
    lines.push(`// ${answer.method} ${answer.url} → ${answer.status}`, `export const answer${checked}: ${type} = ${answer.body};`);
    checked += 1;
  }
  assert.ok(checked >= 15, `only ${checked} JSON answers were recorded`);
  writeFileSync(join(tmp, 'answers.ts'), `${lines.join('\n')}\n`);
  const r = spawnSync(
    TSC,
    ['--noEmit', '--strict', '--target', 'es2022', '--module', 'esnext', '--moduleResolution', 'bundler', '--skipLibCheck', 'answers.ts'],
    { cwd: tmp, encoding: 'utf8', timeout: 120_000 },
  );
  assert.equal(r.status, 0, `tsc refused the real answers:\n${r.stdout}${r.stderr}`);
});

test('the same answers validate against the document (ajv)', () => {
  answerLog.assertMatchDocument(app);
});
