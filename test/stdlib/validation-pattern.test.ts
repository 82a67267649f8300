/**
 * `@regex` on the linear-time engine: RE2 semantics, the constructs it refuses (with a hint), the
 * limits on patterns and inputs, and that no pattern/input pair backtracks catastrophically.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VALIDATORS } from '../../stdlib/validation/index.js';
import { MAX_REGEX_INPUT_LENGTH, compileRegexValidator, patternMatcher } from '../../stdlib/validation/pattern.js';
import { MAX_PATTERN_LENGTH, MAX_PATTERN_PROGRAM_SIZE, isPatternProblem } from '../../plugins/sdk.js';
import type { ArgsProblem, Pattern } from '../../plugins/sdk.js';

/** Milliseconds `f` takes, with its result. */
function timed<T>(f: () => T): { ms: number; result: T } {
  const start = process.hrtime.bigint();
  const result = f();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, result };
}

/** What `@regex(source)` refuses, as its checkArgs reports it. */
function refusal(source: string): ArgsProblem {
  const problem = VALIDATORS.regex!.checkArgs!([source], 'text');
  assert.ok(problem !== null && typeof problem === 'object', `/${source}/ should be refused with a hint`);
  return problem;
}

/** The compiled pattern, failing the test when it does not compile. */
function compiled(source: string): Pattern {
  const result = compileRegexValidator(source);
  if (isPatternProblem(result)) assert.fail(`/${source}/ should compile: ${result.message}`);
  return result;
}

function matches(source: string, text: string): boolean {
  assert.equal(VALIDATORS.regex!.checkArgs!([source], 'text'), null, `/${source}/ should compile`);
  return VALIDATORS.regex!.build([source], 'text')(text, {});
}

describe('@regex semantics on RE2', () => {
  test('search semantics: unanchored patterns match anywhere, ^ and $ anchor to the whole text', () => {
    assert.equal(matches('abc', 'xxabcxx'), true);
    assert.equal(matches('^abc', 'xabc'), false);
    assert.equal(matches('abc$', 'abcx'), false);
    assert.equal(matches('^abc$', 'abc'), true);
    // $ is the end of the text, not before a final newline (as JavaScript without the m flag).
    assert.equal(matches('^abc$', 'abc\n'), false);
    assert.equal(matches('^abc$', 'x\nabc'), false);
    assert.equal(matches('', ''), true);
  });

  test('Unicode: classes by category and script, code points beyond the BMP', () => {
    assert.equal(matches('^\\p{L}+$', 'éßЖ漢𝐀'), true);
    assert.equal(matches('^\\p{L}+$', 'abc1'), false);
    assert.equal(matches('^\\p{Lu}', 'Émile'), true);
    assert.equal(matches('^\\p{Lu}', 'émile'), false);
    assert.equal(matches('^\\p{Greek}+$', 'αβγ'), true);
    assert.equal(matches('^\\p{Greek}+$', 'abc'), false);
    assert.equal(matches('^.$', '😀'), true);
    assert.equal(matches('^\\x{1F600}$', '😀'), true);
    assert.equal(matches('^[^a]$', '\uD83D'), true, 'a lone surrogate is one character');
    assert.equal(matches('^\\d+$', '٣'), false, '\\d is ASCII digits, as in JavaScript');
    assert.equal(matches('^\\w+$', 'é'), false, '\\w is ASCII, as in JavaScript');
  });

  test('case-insensitive matching with the inline flag (?i), Unicode-aware', () => {
    assert.equal(matches('(?i)^abc$', 'AbC'), true);
    assert.equal(matches('(?i)^é$', 'É'), true);
    assert.equal(matches('^(?i:ab)c$', 'ABc'), true);
    assert.equal(matches('^(?i:ab)c$', 'ABC'), false);
    assert.equal(matches('^abc$', 'ABC'), false);
  });

  test('where RE2 differs from JavaScript: \\s is ASCII whitespace, . matches \\r', () => {
    assert.equal(matches('^\\s$', '\u00a0'), false);
    assert.equal(matches('^\\s$', '\u000b'), false);
    assert.equal(matches('^[\\s\\x{A0}]$', '\u00a0'), true);
    assert.equal(matches('^a.b$', 'a\rb'), true);
    assert.equal(matches('^a.b$', 'a\nb'), false);
  });

  test("the spec's RE2 spellings of JavaScript's \\s and . match the same characters", () => {
    const space = compiled('^[\\t\\n\\v\\f\\r\\p{Zs}\\x{2028}\\x{2029}\\x{FEFF}]$');
    const dot = compiled('^[^\\n\\r\\x{2028}\\x{2029}]$');
    for (let cp = 0; cp <= 0x10ffff; cp = cp < 0xffff ? cp + 1 : cp + 0x101) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      assert.equal(space.test(c), /^\s$/u.test(c), `\\s at U+${cp.toString(16)}`);
      assert.equal(dot.test(c), /^.$/u.test(c), `. at U+${cp.toString(16)}`);
    }
  });
});

describe('@regex refuses what a linear-time engine cannot run', () => {
  const unsupported: [string, string][] = [
    ['(a)\\1', 'backreference'],
    ['(?<n>a)\\k<n>', 'backreference'],
    ['(?=a)', 'lookahead'],
    ['a(?!b)', 'lookahead'],
    ['(?<=a)b', 'lookbehind'],
    ['(?<!a)b', 'lookbehind'],
    ['(?>a+)b', 'atomic group'],
    ['a++b', 'possessive quantifier'],
  ];
  for (const [source, what] of unsupported) {
    test(`/${source}/: ${what}`, () => {
      const problem = refusal(source);
      assert.match(problem.message, new RegExp(what));
      assert.match(problem.hint ?? '', /linear-time engine \(RE2 syntax\): backreferences, lookahead, lookbehind/);
    });
  }

  test('JavaScript-only escapes and plain syntax errors get a hint on RE2 syntax', () => {
    assert.match(refusal('^\\u00e9$').hint ?? '', /\\x\{00E9\}/);
    assert.match(refusal('[a-').message, /does not compile: missing closing \]/);
    assert.match(refusal('[a-').hint ?? '', /RE2 syntax/);
    assert.match(refusal('a{1001}').message, /invalid repeat count/);
  });

  test(`patterns of at most ${MAX_PATTERN_LENGTH} characters`, () => {
    // A class of repeated letters: long to write, a single instruction.
    assert.equal(VALIDATORS.regex!.checkArgs!([`[${'a'.repeat(MAX_PATTERN_LENGTH - 2)}]`], 'text'), null);
    assert.match(refusal(`[${'a'.repeat(MAX_PATTERN_LENGTH - 1)}]`).message, /longer than 1000 characters/);
  });

  test(`patterns of at most ${MAX_PATTERN_PROGRAM_SIZE} instructions`, () => {
    // a{998} compiles to 1000 instructions, a{999} to 1001.
    assert.equal(VALIDATORS.regex!.checkArgs!(['a{998}'], 'text'), null);
    const problem = refusal('a{999}');
    assert.match(problem.message, /compiles to 1001 instructions, more than 1000/);
    assert.match(problem.hint ?? '', /@max/);
  });
});

describe('@regex takes linear time', () => {
  test("the reproduction: '^(a+)+$' on 32 a's and a '!' fails at once", () => {
    const check = VALIDATORS.regex!.build(['^(a+)+$'], 'text');
    const { ms, result } = timed(() => check('a'.repeat(32) + '!', {}));
    assert.equal(result, false);
    assert.ok(ms < 100, `took ${ms} ms`);
    assert.equal(check('a'.repeat(32), {}), true);
  });

  test('nested and overlapping quantifiers run in linear time on 1 MB, below the input bound', () => {
    const hostile: [string, string, boolean][] = [
      ['^(a+)+$', 'a'.repeat(1 << 20) + '!', false],
      ['^(a|aa)*$', 'a'.repeat(1 << 20) + '!', false],
      ['^(a|a?)+$', 'a'.repeat(1 << 20) + '!', false],
      ['(x+x+)+y', 'x'.repeat(1 << 20), false],
      ['^(\\w+\\s?)+$', 'ab '.repeat(1 << 18) + '!', false],
      ['^([a-z0-9]+-?)+[a-z0-9]$', 'a-'.repeat(1 << 19) + '-', false],
      ['(.*a){12}', 'a'.repeat(1 << 20), true],
    ];
    for (const [source, text, expected] of hostile) {
      const re = compiled(source);
      const { ms, result } = timed(() => re.test(text));
      assert.equal(result, expected, source);
      assert.ok(ms < 500, `/${source}/ on ${text.length} characters took ${ms} ms`);
    }
  });

  test(`texts of at most ${MAX_REGEX_INPUT_LENGTH} characters are tried`, () => {
    const check = patternMatcher('^a*$');
    assert.equal(check('a'.repeat(MAX_REGEX_INPUT_LENGTH)), true);
    assert.equal(check('a'.repeat(MAX_REGEX_INPUT_LENGTH + 1)), false);
  });

  test('the worst case at both limits stays bounded: a large program the DFA gives up on, on the longest input', () => {
    // 996 instructions: a counted repetition under + that keeps many NFA threads alive.
    const re = compiled('^(?:(?:[a-z]{1,495})+[0-9])+$');
    for (const text of ['a'.repeat(MAX_REGEX_INPUT_LENGTH), 'ab'.repeat(MAX_REGEX_INPUT_LENGTH / 2)]) {
      const { ms, result } = timed(() => re.test(text));
      assert.equal(result, false);
      assert.ok(ms < 500, `took ${ms} ms`);
    }
  });
});
