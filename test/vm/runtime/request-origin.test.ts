/**
 * Where an object of a request came from (ctx.requestOrigin): by identity, at any depth, raw
 * before validated; small data searched without an index, data past SEARCH_LIMIT indexed once,
 * and a source that appears after the index still counted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestOrigins, SEARCH_LIMIT } from '../../../vm/runtime/request-origin.js';
import { HostObject, type Value } from '../../../vm/values.js';

/** A body holding `n` objects (the root included), the last one deepest in a list. */
function bodyOf(n: number): { body: Value; last: Value } {
  const items: Value[] = [];
  for (let i = 0; i < n - 2; i++) items.push({ i });
  const last = { last: true };
  items.push(last);
  return { body: { items }, last };
}

test("raw, validated, or the code's own: by identity, at any depth; raw wins where a source is both", () => {
  const raw = JSON.parse('{"email":{"ne":null},"deep":[{"x":{"in":[1]}}]}') as { email: Value; deep: { x: Value }[] };
  const validated = { tags: ['a'], profile: { city: 'Oslo' } };
  const origins = new RequestOrigins();
  const ask = (v: Value) => origins.of(v, [raw], [validated, raw]);
  assert.equal(ask(raw.email), 'raw');
  assert.equal(ask(raw.deep[0]!.x), 'raw');
  assert.equal(ask(raw as unknown as Value), 'raw');
  assert.equal(ask(validated.tags), 'validated');
  assert.equal(ask(validated.profile), 'validated');
  assert.equal(ask({ ne: null }), null, 'an equal object the code made is its own');
  assert.equal(ask('text'), null);
  assert.equal(ask(null), null);
});

test('a host value in the data (an upload) is not searched into', () => {
  const inside = { secret: true };
  class Upload extends HostObject {
    readonly typeName = 'upload';
    get(): Value | undefined {
      return inside;
    }
    toJSON(): unknown {
      return inside;
    }
  }
  assert.equal(new RequestOrigins().of(inside, [{ file: new Upload() }], []), null);
});

test(`data up to SEARCH_LIMIT (${SEARCH_LIMIT}) objects is searched, larger data indexed: the answers are the same`, () => {
  for (const n of [SEARCH_LIMIT - 1, SEARCH_LIMIT, SEARCH_LIMIT + 1, SEARCH_LIMIT * 4]) {
    const { body, last } = bodyOf(n);
    const validated = { copy: { of: 'last' } };
    const origins = new RequestOrigins();
    assert.equal(origins.of(last, [body], [validated]), 'raw', `n=${n}`);
    assert.equal(origins.of(validated.copy, [body], [validated]), 'validated', `n=${n}`);
    assert.equal(origins.of({ last: true }, [body], [validated]), null, `n=${n}`);
  }
});

test('a source that appears after the data was indexed is added then (a body read after the first question)', () => {
  const { body: query } = bodyOf(SEARCH_LIMIT * 2);
  const origins = new RequestOrigins();
  assert.equal(origins.of({}, [query], []), null);
  const body = { user: { role: 'admin' } };
  assert.equal(origins.of(body.user, [query, body], []), 'raw');
});
