/**
 * The one status table (vm/http-status.ts): the runtime's default error bodies, the response
 * helpers the compiler infers from and the reference page's reason phrases all come from it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { HTTP } from '../../vm/errors.js';
import { STATUSES, defaultErrorCode, defaultErrorMessage, helperStatus, reasonPhrase } from '../../vm/http-status.js';
import { RESPONSE_HELPERS } from '../../vm/compiler/infer.js';
import { STATUS_ASSET_PATH, renderStatusAsset } from '../../tools/gen-status-asset.js';

test('statuses are listed once, ascending', () => {
  const statuses = STATUSES.map((s) => s.status);
  assert.deepEqual(
    statuses,
    [...new Set(statuses)].sort((a, b) => a - b),
  );
});

test("an error status's default code is a catalogue entry answering that status", () => {
  for (const s of STATUSES) {
    if (s.error === undefined) continue;
    assert.equal(HTTP[s.error].status, s.status, s.error);
    assert.equal(defaultErrorCode(s.status), s.error);
    assert.equal(defaultErrorMessage(s.status), HTTP[s.error].message);
  }
  assert.equal(defaultErrorCode(408), 'http_408', 'fail 408 keeps its generic code: only the server names request_timeout');
  assert.equal(defaultErrorMessage(418), 'Request failed');
  assert.equal(defaultErrorMessage(599), 'Server error');
});

test('every response helper answers the status the table gives it', () => {
  for (const s of STATUSES) if (s.helper !== undefined) assert.equal(RESPONSE_HELPERS[s.helper]?.status, s.status, s.helper);
  for (const [name, helper] of Object.entries(RESPONSE_HELPERS)) {
    if (helper.kind === 'error') assert.equal(HTTP[name as keyof typeof HTTP]?.status, helper.status, `${name} is the catalogue code of its status`);
  }
  assert.equal(helperStatus('redirect'), 302);
  assert.throws(() => helperStatus('nope'));
});

test('reason phrases are the RFC 9110 ones, unnamed statuses have none', () => {
  assert.equal(reasonPhrase(413), 'Content Too Large');
  assert.equal(reasonPhrase(431), 'Request Header Fields Too Large');
  assert.equal(reasonPhrase(299), '');
});

test("the reference page's reason phrases are generated from the table", async () => {
  assert.ok(
    readFileSync(STATUS_ASSET_PATH, 'utf8') === renderStatusAsset(),
    'stdlib/reference/assets/statuses.js is out of date: run `npx tsc -p . && node dist/tools/gen-status-asset.js`',
  );
  const render = (await import(new URL('../../../stdlib/reference/assets/render.js', import.meta.url).href)) as { reason(status: number): string };
  for (const s of STATUSES) assert.equal(render.reason(s.status), s.reason);
  assert.equal(render.reason(299), '');
});
