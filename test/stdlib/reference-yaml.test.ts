/** The YAML emitter: whatever JSON it is given reads back as itself, under YAML 1.2 and 1.1. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parse as parseYaml } from 'yaml';
import { toYaml } from '../../stdlib/reference/yaml.js';

describe('the YAML emitter', () => {
  const TRICKY = [
    'yes',
    'No',
    'ON',
    'off',
    'y',
    'N',
    'null',
    'Null',
    '~',
    'true',
    'False',
    '123',
    '-1',
    '1e3',
    '0x1F',
    '0o17',
    '.inf',
    '.NaN',
    '1_000',
    '1:20',
    '2001-12-14',
    '- a',
    'a: b',
    'a:',
    'a #b',
    '#x',
    'x#y',
    '@at',
    '`b',
    '|x',
    '>x',
    '%x',
    '&a',
    '*a',
    '!t',
    '?',
    '-',
    '[a]',
    '{a}',
    'a,b',
    '',
    ' ',
    ' lead',
    'trail ',
    'multi\nline',
    'trailing\n',
    'two\n\n',
    '\nfirst empty',
    '  indented\nnext',
    'tab\there',
    'cr\r\nlf',
    "it's",
    '"q"',
    'ü',
    '日本',
    'emoji 😀',
    '\u2028',
    '\u0085x',
    '\x7f',
    '\ufeff',
    '=',
    '<<',
    '/items/{id}',
    '$ref',
    'x-rvm-route',
    'a\\b',
  ];

  test('tricky strings, as values and as keys, read back as themselves (YAML 1.2 and 1.1)', () => {
    const data = {
      values: TRICKY,
      keys: Object.fromEntries(TRICKY.map((t, i) => [t, i])),
      nested: [[1, [2, []]], {}, [{ a: { b: 'c\nd' } }]],
      n: [0, -0.5, 1e21, 3.14],
    };
    const text = toYaml(data);
    assert.deepEqual(parseYaml(text), data);
    assert.deepEqual(parseYaml(text, { version: '1.1' }), data, 'YAML 1.1 readers see the same');
  });

  test('keys longer than YAML allows implicitly use the explicit form', () => {
    const long = 'k'.repeat(2000);
    assert.deepEqual(parseYaml(toYaml({ [long]: { a: 1 }, [`${long}2`]: 'v' })), { [long]: { a: 1 }, [`${long}2`]: 'v' });
  });

  test('any JSON value reads back as itself', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const plain = JSON.parse(JSON.stringify(value)) as unknown;
        assert.deepEqual(parseYaml(toYaml(plain)), plain);
      }),
      { numRuns: 300 },
    );
  });
});
