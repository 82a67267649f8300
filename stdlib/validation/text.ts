/**
 * Text shape: `@regex`, `@starts_with`, `@ends_with`, `@contains`, `@alpha`, `@alphanumeric`,
 * `@numeric`, `@lowercase`, `@uppercase`, `@hex`, `@base64`, `@json` and `@slug`.
 */
import type { Arbitrary, FastCheck, FieldType, Literal } from '../../plugins/sdk.js';
import { valuesEqual, type Value } from '../../plugins/sdk.js';
import { anyText, smallJson } from './arbitraries.js';
import { escapeRegex, showLiteral, textArg, textCheck, type ValidatorTable } from './common.js';
import { isPatternProblem } from '../../plugins/sdk.js';
import { MAX_REGEX_INPUT_LENGTH, compileRegexValidator, patternMatcher } from './pattern.js';

/** Values sampled from a pattern when looking for ones that match (fallbacks of the arbitrary). */
const PATTERN_PROBES = 200;
/**
 * Inline flags at the start of an RE2 pattern (`(?i)`), which JavaScript does not read; each only
 * widens what matches, so samples generated without them still match.
 */
const LEADING_FLAGS = /^\(\?[ims]+\)/;

const ALPHA = /^\p{L}[\p{L}\p{M}]*$/u;
const ALPHANUMERIC = /^[\p{L}\p{N}][\p{L}\p{M}\p{N}]*$/u;
const NUMERIC = /^[0-9]+$/;
const HEX = /^[0-9a-fA-F]+$/;
/** RFC 4648 §4: the standard alphabet, padded to a multiple of 4 characters. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * A JavaScript RegExp for the pattern, only to generate samples with fast-check (which reads
 * RegExp syntax); null where the RE2 syntax has no JavaScript spelling. Whether a sample
 * matches is always decided by the server's matcher.
 */
function sampleRegExp(source: string): RegExp | null {
  try {
    return new RegExp(source.replace(LEADING_FLAGS, ''), 'u');
  } catch {
    return null;
  }
}

/** Texts matching the pattern: fast-check's generator where it understands the pattern, else probes. */
function patternAccepts(fc: FastCheck, source: string): Arbitrary<string> {
  const compiled = compileRegexValidator(source);
  if (isPatternProblem(compiled)) throw new Error(compiled.message);
  const test = patternMatcher(source);
  const re = sampleRegExp(source);
  let generated: Arbitrary<string> | null = null;
  try {
    generated = re ? fc.stringMatching(re) : null;
  } catch {
    generated = null;
  }
  const probes = [...(generated ? fc.sample(generated, { numRuns: PATTERN_PROBES, seed: 1 }) : []), '', 'a', 'A', '0', 'abc', 'a1', 'test@example.com'];
  const known = probes.filter(test);
  if (known.length === 0) throw new Error(`no text matching /${source}/ could be generated`);
  // Never filter (a filter that rejects everything never ends): swap a miss for a known match.
  return (generated ?? fc.constant(known[0]!)).chain((s) => (test(s) ? fc.constant(s) : fc.constantFrom(...known)));
}

function patternRejects(fc: FastCheck, source: string): Arbitrary<string> {
  const test = patternMatcher(source);
  // Text over the input limit always fails, so every miss has a failing stand-in.
  const tooLong = 'x'.repeat(MAX_REGEX_INPUT_LENGTH + 1);
  return anyText(fc).map((s) => (test(s) ? tooLong : s));
}

/** Strings built from characters `unit` yields, at least one. */
function stringOf(fc: FastCheck, unit: Arbitrary<string>, minLength = 1): Arbitrary<string> {
  return fc.array(unit, { minLength, maxLength: 16 }).map((parts) => parts.join(''));
}

/** One code point passing `test`, from a sample set and from all of Unicode. */
function charWhere(fc: FastCheck, samples: string[], test: (ch: string) => boolean): Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(...samples),
    fc
      .integer({ min: 0, max: 0x10ffff })
      .filter((cp) => cp < 0xd800 || cp > 0xdfff)
      .map((cp) => String.fromCodePoint(cp))
      .filter(test),
  );
}

const LETTERS = ['a', 'z', 'A', 'Z', 'é', 'ß', 'Ж', 'ж', 'ω', '漢', 'あ', 'ا', '𝐀'];
const DIGITS = ['0', '9', '٣', '²', 'Ⅻ'];
const MARKS = ['\u0301', '\u0308'];
const LETTER = /^\p{L}$/u;
const NUMBER = /^\p{N}$/u;

function letterWord(fc: FastCheck, allowDigits: boolean): Arbitrary<string> {
  const letter = charWhere(fc, LETTERS, (c) => LETTER.test(c));
  const first = allowDigits
    ? fc.oneof(
        letter,
        charWhere(fc, DIGITS, (c) => NUMBER.test(c)),
      )
    : letter;
  const marked = fc.tuple(first, fc.option(fc.constantFrom(...MARKS), { nil: '' })).map(([c, m]) => c + m);
  return stringOf(fc, marked);
}

/** Texts containing at least one of `bad`, the rest drawn from `ok`. */
function withOneOf(fc: FastCheck, ok: Arbitrary<string>, bad: string[]): Arbitrary<string> {
  return fc.oneof(
    fc.constant(''),
    fc.tuple(fc.option(ok, { nil: '' }), fc.constantFrom(...bad), fc.option(ok, { nil: '' })).map(([a, b, c]) => a + b + c),
  );
}

/** Removes every occurrence of `part` (repeatedly, as removing may join a new one). */
function without(s: string, part: string): string {
  let out = s;
  while (out.includes(part)) out = out.split(part).join('');
  return out;
}

function containsCheck(x: Literal, type: FieldType): (value: Value) => boolean {
  if (type === 'list') return (v) => Array.isArray(v) && v.some((item) => valuesEqual(item, x));
  return textCheck((s) => typeof x === 'string' && s.includes(x));
}

function isJson(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

const TEXT: readonly FieldType[] = ['text'];
const NON_EMPTY = (name: string) => (args: readonly Literal[]) =>
  typeof args[0] === 'string' && args[0] !== '' ? null : `@${name} needs non-empty text, got ${showLiteral(args[0] ?? null)}`;

/** The text-shape validators of this module. */
export const TEXT_VALIDATORS: ValidatorTable = {
  regex: {
    types: TEXT,
    params: [
      { name: 'pattern', type: 'text', doc: 'A regular expression in RE2 syntax (Unicode), without slashes; backreferences and lookaround are refused.' },
    ],
    doc: `The text contains a match of the pattern, run on a linear-time engine (anchor it with ^ and $ to match the whole text); texts over ${MAX_REGEX_INPUT_LENGTH} characters fail.`,
    checkArgs: (args) => {
      const compiled = compileRegexValidator(textArg(args));
      return isPatternProblem(compiled) ? compiled : null;
    },
    build: (args) => textCheck(patternMatcher(textArg(args))),
    message: (args) => `must match the pattern ${textArg(args)}`,
    schema: (args) => ({ pattern: textArg(args) }),
    arbitraries: {
      accepts: (fc, args) => patternAccepts(fc, textArg(args)),
      rejects: (fc, args) => patternRejects(fc, textArg(args)),
    },
  },

  starts_with: {
    types: TEXT,
    params: [{ name: 'prefix', type: 'text', doc: 'What the text must begin with (case-sensitive).' }],
    doc: 'The text begins with the given prefix (case-sensitive).',
    checkArgs: NON_EMPTY('starts_with'),
    build: (args) => textCheck((s) => s.startsWith(textArg(args))),
    message: (args) => `must start with ${showLiteral(textArg(args))}`,
    schema: (args) => ({ pattern: `^${escapeRegex(textArg(args))}` }),
    arbitraries: {
      accepts: (fc, args) => anyText(fc).map((s) => textArg(args) + s),
      rejects: (fc, args) => {
        const prefix = textArg(args);
        const other = prefix.startsWith('x') ? 'y' : 'x';
        return anyText(fc).map((s) => (s.startsWith(prefix) ? other + s : s));
      },
    },
  },

  ends_with: {
    types: TEXT,
    params: [{ name: 'suffix', type: 'text', doc: 'What the text must end with (case-sensitive).' }],
    doc: 'The text ends with the given suffix (case-sensitive).',
    checkArgs: NON_EMPTY('ends_with'),
    build: (args) => textCheck((s) => s.endsWith(textArg(args))),
    message: (args) => `must end with ${showLiteral(textArg(args))}`,
    schema: (args) => ({ pattern: `${escapeRegex(textArg(args))}$` }),
    arbitraries: {
      accepts: (fc, args) => anyText(fc).map((s) => s + textArg(args)),
      rejects: (fc, args) => {
        const suffix = textArg(args);
        const other = suffix.endsWith('x') ? 'y' : 'x';
        return anyText(fc).map((s) => (s.endsWith(suffix) ? s + other : s));
      },
    },
  },

  contains: {
    types: ['text', 'list'],
    params: [{ name: 'value', type: 'any', doc: 'Text the text must contain, or the item a list must hold.' }],
    doc: 'Text contains the given text (case-sensitive); a list holds an item equal to the given value.',
    checkArgs: (args, type) => (type === 'text' ? NON_EMPTY('contains')(args) : null),
    build: (args, type) => containsCheck(args[0] ?? null, type),
    message: (args) => `must contain ${showLiteral(args[0] ?? null)}`,
    schema: (args, type) => (type === 'list' ? { contains: { const: args[0] ?? null } } : { pattern: escapeRegex(textArg(args)) }),
    arbitraries: {
      accepts: (fc, args, type) => {
        const x = args[0] ?? null;
        if (type === 'list')
          return fc.tuple(fc.array(smallJson(fc), { maxLength: 4 }), fc.array(smallJson(fc), { maxLength: 4 })).map(([a, b]) => [...a, x, ...b]);
        return fc.tuple(anyText(fc), anyText(fc)).map(([a, b]) => a + textArg(args) + b);
      },
      rejects: (fc, args, type) => {
        const x = args[0] ?? null;
        if (type === 'list') return fc.array(smallJson(fc), { maxLength: 8 }).map((items) => items.filter((i) => !valuesEqual(i as Value, x)));
        return anyText(fc).map((s) => without(s, textArg(args)));
      },
    },
  },

  alpha: {
    types: TEXT,
    params: [],
    doc: 'Only letters of any script (Unicode category L, with combining marks after a letter); empty text fails.',
    build: () => textCheck((s) => ALPHA.test(s)),
    message: () => 'must contain only letters',
    schema: () => ({ pattern: ALPHA.source }),
    arbitraries: {
      accepts: (fc) => letterWord(fc, false),
      rejects: (fc) => withOneOf(fc, letterWord(fc, false), [' ', '1', '-', '_', '!', '٣', '\n']),
    },
  },

  alphanumeric: {
    types: TEXT,
    params: [],
    doc: 'Only letters and digits of any script (Unicode categories L and N, with combining marks); empty text fails.',
    build: () => textCheck((s) => ALPHANUMERIC.test(s)),
    message: () => 'must contain only letters and digits',
    schema: () => ({ pattern: ALPHANUMERIC.source }),
    arbitraries: {
      accepts: (fc) => letterWord(fc, true),
      rejects: (fc) => withOneOf(fc, letterWord(fc, true), [' ', '-', '_', '.', '@', '!', '\n', '\t']),
    },
  },

  numeric: {
    types: TEXT,
    params: [],
    doc: 'Only the ASCII digits 0-9 (no sign, point or spaces; leading zeros kept, as in codes); empty text fails.',
    build: () => textCheck((s) => NUMERIC.test(s)),
    message: () => 'must contain only digits',
    schema: () => ({ pattern: NUMERIC.source }),
    arbitraries: {
      accepts: (fc) => fc.stringMatching(/^[0-9]{1,24}$/),
      rejects: (fc) => withOneOf(fc, fc.stringMatching(/^[0-9]{1,8}$/), ['-', '+', '.', ' ', 'e', 'a', '١', '²']),
    },
  },

  lowercase: {
    types: TEXT,
    params: [],
    doc: 'No upper-case letters: the text equals its own lower-casing (digits, symbols and empty text pass).',
    build: () => textCheck((s) => s === s.toLowerCase()),
    message: () => 'must be lower-case',
    schema: () => ({ 'x-case': 'lower' }),
    arbitraries: {
      accepts: (fc) => anyText(fc).map((s) => s.toLowerCase()),
      rejects: (fc) =>
        fc.tuple(anyText(fc), fc.constantFrom('A', 'Z', 'É', 'Ж', 'Σ', 'Ⓐ'), anyText(fc)).map(([a, c, b]) => a.toLowerCase() + c + b.toLowerCase()),
    },
  },

  uppercase: {
    types: TEXT,
    params: [],
    doc: 'No lower-case letters: the text equals its own upper-casing (digits, symbols and empty text pass).',
    build: () => textCheck((s) => s === s.toUpperCase()),
    message: () => 'must be upper-case',
    schema: () => ({ 'x-case': 'upper' }),
    arbitraries: {
      accepts: (fc) => anyText(fc).map((s) => s.toUpperCase()),
      rejects: (fc) =>
        fc.tuple(anyText(fc), fc.constantFrom('a', 'z', 'é', 'ж', 'σ', 'ß', 'ⓐ'), anyText(fc)).map(([a, c, b]) => a.toUpperCase() + c + b.toUpperCase()),
    },
  },

  hex: {
    types: TEXT,
    params: [],
    doc: 'Only hexadecimal digits 0-9, a-f, A-F (no 0x prefix); empty text fails.',
    build: () => textCheck((s) => HEX.test(s)),
    message: () => 'must be hexadecimal',
    schema: () => ({ pattern: HEX.source }),
    arbitraries: {
      accepts: (fc) => fc.stringMatching(/^[0-9a-fA-F]{1,40}$/),
      rejects: (fc) => withOneOf(fc, fc.stringMatching(/^[0-9a-f]{1,8}$/), ['g', 'x', ' ', '-', 'G', 'z']),
    },
  },

  base64: {
    types: TEXT,
    params: [],
    doc: 'Standard base64 (RFC 4648 §4: A-Z a-z 0-9 + /, padded with = to a multiple of 4, no spaces); base64url and empty text fail.',
    build: () => textCheck((s) => s !== '' && BASE64.test(s)),
    message: () => 'must be valid base64',
    schema: () => ({ contentEncoding: 'base64', pattern: BASE64.source }),
    arbitraries: {
      accepts: (fc) => fc.uint8Array({ minLength: 1, maxLength: 48 }).map((b) => Buffer.from(b).toString('base64')),
      rejects: (fc) =>
        fc.oneof(
          fc.constant(''),
          fc
            .tuple(fc.uint8Array({ minLength: 1, maxLength: 48 }), fc.constantFrom('-', '_', ' ', '!', '\n'))
            .map(([b, c]) => c + Buffer.from(b).toString('base64')),
          fc.uint8Array({ minLength: 1, maxLength: 48 }).map((b) => Buffer.from(b).toString('base64').replace(/=+$/, '') + '==='),
        ),
    },
  },

  json: {
    types: TEXT,
    params: [],
    doc: 'Text that parses as JSON (RFC 8259: any JSON value, e.g. {"a":1}, [1,2], "x" or 3).',
    build: () => textCheck(isJson),
    message: () => 'must be valid JSON',
    schema: () => ({ contentMediaType: 'application/json' }),
    arbitraries: {
      accepts: (fc) => fc.json({ maxDepth: 3 }),
      rejects: (fc) =>
        fc.oneof(
          fc.constantFrom('', '{', "{'a':1}", '[1,]', 'NaN', 'undefined', '{"a":1}}'),
          anyText(fc).filter((s) => !isJson(s)),
        ),
    },
  },

  slug: {
    types: TEXT,
    params: [],
    doc: "A URL slug: lower-case ASCII letters and digits in words joined by single hyphens, e.g. 'my-first-post'.",
    build: () => textCheck((s) => SLUG.test(s)),
    message: () => "must be a slug such as 'my-post' (lower-case letters and digits joined by single hyphens)",
    schema: () => ({ pattern: SLUG.source }),
    arbitraries: {
      accepts: (fc) => fc.stringMatching(/^[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,4}$/),
      rejects: (fc) =>
        fc.oneof(
          fc.constantFrom('', '-', 'a-', '-a', 'a--b', 'Hello', 'a b', 'é', 'a_b'),
          anyText(fc).filter((s) => !SLUG.test(s)),
        ),
    },
  },
};
