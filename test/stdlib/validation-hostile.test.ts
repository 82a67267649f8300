/**
 * Every validator that reads request text, on 1 MB hostile inputs: long runs of the characters
 * its pattern loops on, near misses at the very end, separators repeated. Each must give the right
 * answer quickly, so a pattern that backtracks catastrophically (or quadratically) fails here.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VALIDATORS, VALIDATOR_NAMES } from '../../stdlib/validation/index.js';
import type { Literal } from '../../plugins/sdk.js';

/** 1 MiB of characters. */
const M = 1 << 20;
/**
 * Per input: generous for linear work on 1 MB — JSON.parse of 512 Ki nested arrays, the slowest,
 * takes 240 ms on a 2-core machine that runs other suites at once — and far below what
 * super-linear work takes (a quadratic scan of 1 MB: minutes).
 */
const MAX_MS = 1000;
/**
 * Runs per input; the fastest counts. Work that is super-linear is slow on every run, while a
 * collection or a busy machine (the suite runs files in parallel) slows one.
 */
const TIMED_RUNS = 3;

const run = (s: string, n = M) => s.repeat(Math.ceil(n / s.length)).slice(0, n);

interface Hostile {
  args?: Literal[];
  cases: [string, boolean][];
}

/** Hostile inputs and the right answer, per validator that applies to text. */
const HOSTILE: Record<string, Hostile> = {
  required: { cases: [[run('a'), true]] },
  default: { args: ['x'], cases: [[run('a'), true]] },
  same: { args: ['other'], cases: [[run('a'), false]] },
  min: {
    args: [3],
    cases: [
      [run('😀'), true],
      [run('\uD83D'), true],
    ],
  },
  max: { args: [3], cases: [[run('😀'), false]] },
  range: { args: [1, 10], cases: [[run('a'), false]] },
  minLength: { args: [1], cases: [[run('a'), true]] },
  maxLength: { args: [10], cases: [[run('a'), false]] },
  length: {
    args: [M],
    cases: [
      [run('a'), true],
      [run('😀', 2 * M), true],
      [run('a') + '!', false],
    ],
  },
  one_of: { args: ['a', 'b'], cases: [[run('a'), false]] },
  not_one_of: { args: ['a', 'b'], cases: [[run('a'), true]] },
  regex: {
    args: ['^(a+)+$'],
    cases: [
      [run('a') + '!', false],
      [run('a'), false],
    ],
  },
  starts_with: {
    args: ['ab'],
    cases: [
      [run('a'), false],
      [run('ab'), true],
    ],
  },
  ends_with: {
    args: ['ab'],
    cases: [
      [run('a') + 'b', true],
      [run('ab') + 'a', false],
    ],
  },
  contains: {
    args: ['aab'],
    cases: [
      [run('a'), false],
      [run('a') + 'b', true],
      [run('ab'), false],
    ],
  },
  alpha: {
    cases: [
      [run('a'), true],
      [run('a') + '1', false],
      [run('é') + '!', false],
      [run('a\u0301'), true],
      ['\u0301' + run('a'), false],
    ],
  },
  alphanumeric: {
    cases: [
      [run('a1'), true],
      [run('a1') + '!', false],
      [run('٣a\u0301'), true],
      [run('a') + ' ', false],
    ],
  },
  numeric: {
    cases: [
      [run('1'), true],
      [run('1') + 'a', false],
      [run('١'), false],
    ],
  },
  lowercase: {
    cases: [
      [run('a'), true],
      [run('a') + 'A', false],
    ],
  },
  uppercase: {
    cases: [
      [run('A'), true],
      [run('A') + 'a', false],
    ],
  },
  hex: {
    cases: [
      [run('f0'), true],
      [run('f') + 'g', false],
    ],
  },
  base64: {
    cases: [
      [run('A'), true],
      [run('A') + '!', false],
      [run('A', M - 2) + '==', true],
      [run('A', M - 1) + '=', true],
      [run('A') + '=', false],
      [run('A', M + 1), false],
      [run('A=', M), false],
      [run('AA==', M), false],
    ],
  },
  json: {
    cases: [
      ['"' + run('a') + '"', true],
      [run('['), false],
      [run('[', M / 2) + run(']', M / 2), true],
      ['"' + run('\\') + '"', true],
      [run('{"a":'), false],
    ],
  },
  slug: {
    cases: [
      [run('a'), true],
      [run('a-') + 'a', true],
      [run('a-'), false],
      [run('a') + '!', false],
      [run('a--'), false],
      [run('a-', M - 1) + '_', false],
    ],
  },
  email: {
    cases: [
      [run('a') + '@example.com', false],
      ['a@' + run('a.') + 'com', false],
      [run('a.') + '@x.com', false],
      ['a@' + run('a-') + 'a.com', false],
      [run('!#$%'), false],
    ],
  },
  url: {
    cases: [
      ['http://' + run('a'), false],
      ['http://x.com/' + run('a'), false],
      [run('http://'), false],
      ['http://' + run('a', 2000), true],
    ],
  },
  phone: {
    cases: [
      [run('1'), false],
      [run('+1 '), false],
      [run('(1-'), false],
      [run('1 .'), false],
    ],
  },
  uuid: {
    cases: [
      [run('0'), false],
      [run('0-'), false],
      ['123e4567-e89b-12d3-a456-426614174000' + run('0'), false],
    ],
  },
  credit_card: {
    cases: [
      [run('4'), false],
      [run('4 '), false],
      [run('4-'), false],
      [run('4 -'), false],
    ],
  },
  ip: {
    cases: [
      [run('1.'), false],
      [run(':'), false],
      [run('1:'), false],
      [run('f'), false],
      ['::ffff:' + run('1.'), false],
    ],
  },
  ipv4: {
    cases: [
      [run('1.'), false],
      [run('255.'), false],
      [run('1'), false],
    ],
  },
  ipv6: {
    cases: [
      [run(':'), false],
      [run('ffff:'), false],
      [run('::1'), false],
    ],
  },
  hostname: {
    cases: [
      [run('a.'), false],
      [run('a'), false],
      [run('a-'), false],
      [run('a', 63) + '.' + run('b', 63), true],
    ],
  },
  date: {
    cases: [
      [run('2024-'), false],
      [run('1'), false],
      ['2024-01-01' + run(' '), false],
    ],
  },
  datetime: {
    cases: [
      [run('2024-01-01T'), false],
      ['2024-01-01T00:00:00.' + run('1'), false],
      [run('1'), false],
      ['2024-01-01T00:00:00' + run('+00:00'), false],
    ],
  },
  before: {
    args: ['2024-01-01'],
    cases: [
      [run('2023-'), false],
      ['2023-12-31T00:00:00.' + run('9'), false],
    ],
  },
  after: {
    args: ['2024-01-01'],
    cases: [
      [run('2025-'), false],
      ['2025-01-01T00:00:00' + run('Z'), false],
    ],
  },
};

describe('built-in validators on 1 MB hostile inputs', () => {
  test('every validator that applies to text has hostile cases', () => {
    const textValidators = VALIDATOR_NAMES.filter((n) => VALIDATORS[n]!.types.includes('text'));
    assert.deepEqual(Object.keys(HOSTILE).sort(), [...textValidators].sort());
  });

  for (const [name, { args = [], cases }] of Object.entries(HOSTILE)) {
    test(`@${name}: right answer in under ${MAX_MS} ms per input`, () => {
      const spec = VALIDATORS[name]!;
      assert.equal(spec.checkArgs?.(args, 'text') ?? null, null);
      const check = spec.build(args, 'text');
      cases.forEach(([input, expected], i) => {
        let ms = Infinity;
        for (let run = 0; run < TIMED_RUNS && ms >= MAX_MS; run++) {
          const start = performance.now();
          const result = check(input, { other: 'x' });
          ms = Math.min(ms, performance.now() - start);
          assert.equal(result, expected, `case ${i} (${input.length} characters, starting ${JSON.stringify(input.slice(0, 12))})`);
        }
        assert.ok(ms < MAX_MS, `case ${i} took ${ms.toFixed(1)} ms at best of ${TIMED_RUNS}`);
      });
    });
  }
});
