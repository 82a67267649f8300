/** The JSON scanner refuses exactly what JSON.parse refuses, and projects members as JSON.parse builds them. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { projectMembers, scanJson } from '../../../../vm/runtime/http/json-scan.js';

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A JSON text with one character changed, inserted or removed: mostly not JSON any more. */
const mutated = fc
  .tuple(fc.json(), fc.nat(), fc.constantFrom('del', 'ins', 'swap'), fc.constantFrom(...'{}[],:"\\ 0-1.eE+tfnul\u0000\u001f\n\tx'.split('')))
  .map(([text, at, how, c]) => {
    const i = text.length === 0 ? 0 : at % text.length;
    if (how === 'del') return text.slice(0, i) + text.slice(i + 1);
    if (how === 'ins') return text.slice(0, i) + c + text.slice(i);
    return text.slice(0, i) + c + text.slice(i + 1);
  });

describe('scanJson', () => {
  test('accepts every JSON text and refuses every text JSON.parse refuses', () => {
    fc.assert(
      fc.property(fc.oneof(fc.json(), mutated, fc.string()), (text) => assert.equal(scanJson(text) !== null, parses(text), JSON.stringify(text))),
      { numRuns: 3000 },
    );
  });

  test('the corners of the grammar, as JSON.parse reads them', () => {
    const cases = [
      '0',
      '-0',
      '01',
      '1.',
      '.5',
      '1e',
      '1e+',
      '1E-2',
      '-',
      '"\\u12"',
      '"\\u12ab"',
      '"\\x"',
      '"a\tb"',
      '"\ud800"',
      ' \n\t\r1 ',
      '\u00a01',
      '[1,]',
      '{"a":1,}',
      '{,}',
      '[,1]',
      'tru',
      'nulls',
      '""',
      '{"a" 1}',
      '{"a":}',
      '[]',
      '{}',
      '',
    ];
    for (const text of cases) assert.equal(scanJson(text) !== null, parses(text), JSON.stringify(text));
  });

  test('members of a top-level object: the last of a repeated key, each parsed as JSON.parse parses it', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.string(), (object, extra) => {
        const text = `${JSON.stringify(object).slice(0, -1)}${Object.keys(object).length ? ',' : ''}${JSON.stringify(extra)}:1, ${JSON.stringify(extra)} : [2]}`;
        const scan = scanJson(text);
        assert.ok(scan !== null && scan.kind === 'object');
        const whole = JSON.parse(text) as Record<string, unknown>;
        assert.deepEqual(projectMembers(text, scan.members, Object.keys(whole)), whole);
      }),
    );
  });

  test('a __proto__ member stays an own data property; a missing name is left out; other values are `other`', () => {
    const text = '{"__proto__":{"polluted":true},"a":1}';
    const scan = scanJson(text);
    assert.ok(scan !== null && scan.kind === 'object');
    const out = projectMembers(text, scan.members, ['__proto__', 'b']);
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, { polluted: true });
    assert.equal('b' in out, false);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.deepEqual(scanJson(' [1, {"a": 2}] '), { kind: 'other' });
    assert.deepEqual(scanJson('"text"'), { kind: 'other' });
  });
});
