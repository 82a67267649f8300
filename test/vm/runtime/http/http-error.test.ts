/**
 * HttpError lives in a leaf module: the body readers (body.ts, multipart.ts) and admission share
 * it without importing each other, and its status and code come from the error catalogue.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { findCycles, readImportGraph } from '../../../../tools/import-graph.js';
import { HTTP } from '../../../../vm/errors.js';
import { HttpError } from '../../../../vm/runtime/http/http-error.js';
import { HttpError as FromBody } from '../../../../vm/runtime/http/body.js';

/** The repository: this file runs as dist/test/vm/runtime/http/http-error.test.js. */
const ROOT = fileURLToPath(new URL('../../../../../', import.meta.url));

test('no import cycle runs through the body readers', () => {
  const graph = readImportGraph(ROOT);
  assert.ok(graph.has('vm/runtime/http/body.ts') && graph.has('vm/runtime/http/multipart.ts'), 'the graph no longer holds the body readers');
  const through = findCycles(graph).filter((cycle) => cycle.some((file) => file.startsWith('vm/runtime/http/')));
  assert.deepEqual(through, []);
  assert.deepEqual(graph.get('vm/runtime/http/http-error.ts'), ['vm/errors.ts'], 'http-error.ts imports nothing but the catalogue entry type');
});

test('an HttpError answers the status and code of its catalogue entry, with its message unless given', () => {
  const plain = new HttpError(HTTP.payload_too_large);
  assert.equal(plain.status, 413);
  assert.equal(plain.code, 'payload_too_large');
  assert.equal(plain.message, HTTP.payload_too_large.message);
  const told = new HttpError(HTTP.overloaded, 'busy', { 'retry-after': '1' }, [{ field: null }]);
  assert.deepEqual([told.status, told.code, told.message, told.headers, told.details], [503, 'overloaded', 'busy', { 'retry-after': '1' }, [{ field: null }]]);
  assert.equal(FromBody, HttpError, 'body.ts re-exports the one class');
});
