/** `response { }` and `fail` as the runtime answers them: the host checks fields and statuses, at their limits. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { failStatement, respondStatement } from '../../../vm/runtime/statements.js';
import { HALT } from '../../../plugins/sdk.js';
import { RvmError, type Value } from '../../../vm/values.js';
import { fakeContext } from '../../../plugins/testing.js';

function throwsCode(fn: () => unknown, code: string): void {
  assert.throws(fn, (e: unknown) => e instanceof RvmError && e.code === code);
}

describe('response statement', () => {
  test('answers with the first body field present, its status and headers', () => {
    const ctx = fakeContext();
    assert.equal(respondStatement(ctx, { status: 201, json: { id: 1 }, headers: { 'X-A': 1 } }), HALT);
    assert.deepEqual(ctx.answers, [{ status: 201, body: { id: 1 }, kind: 'json' }]);
    assert.equal(ctx.response.getHeader('x-a'), '1');
    const text = fakeContext();
    respondStatement(text, { text: 12 });
    assert.deepEqual(text.answers, [{ status: 200, body: '12', kind: 'text' }]);
  });

  test('204 and 304 without a body are empty; others answer null as JSON', () => {
    for (const [status, kind] of [
      [204, 'empty'],
      [304, 'empty'],
      [200, 'json'],
    ] as const) {
      const ctx = fakeContext();
      respondStatement(ctx, { status });
      assert.deepEqual(ctx.answers, [{ status, body: null, kind }]);
    }
  });

  test('an unknown field is invalid_argument (a computed object the compiler could not see)', () => {
    const ctx = fakeContext();
    throwsCode(() => respondStatement(ctx, { status: 200, jsn: 1 }), 'invalid_argument');
    assert.deepEqual(ctx.answers, []);
  });

  test('status 100 and 599 are the limits; 99, 600, 200.5 and text are invalid_status', () => {
    for (const status of [100, 599]) assert.equal(respondStatement(fakeContext(), { status }), HALT);
    for (const status of [99, 600, 200.5, '200'] as Value[]) throwsCode(() => respondStatement(fakeContext(), { status }), 'invalid_status');
  });

  test('headers that are not an object are a type_error', () => {
    throwsCode(() => respondStatement(fakeContext(), { headers: ['x'] }), 'type_error');
    throwsCode(() => respondStatement(fakeContext(), { headers: 'x' }), 'type_error');
  });
});

describe('fail statement', () => {
  test('400 and 599 are the limits; 399, 600 and a non-int are invalid_status', () => {
    for (const status of [400, 599]) assert.equal(failStatement(fakeContext(), status, null), HALT);
    for (const status of [399, 600, 404.5, '404', null] as Value[]) throwsCode(() => failStatement(fakeContext(), status, null), 'invalid_status');
  });

  test('the message is turned into text; none leaves the status its own', () => {
    const ctx = fakeContext();
    failStatement(ctx, 409, 42);
    assert.equal(ctx.failures[0]!.message, '42');
    const bare = fakeContext();
    failStatement(bare, 404, null);
    assert.equal(bare.answers[0]!.status, 404);
    assert.equal(bare.failures.length, 1);
  });
});
