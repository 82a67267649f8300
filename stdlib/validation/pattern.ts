/**
 * User-written patterns (`@regex`) on a linear-time engine: re2js, a pure-JS port of RE2. A
 * pattern is compiled once, when its validator is built; matching takes time proportional to the
 * input's length times the pattern's program size, never exponential, whatever either holds.
 * Built-in validators keep their own vetted JavaScript patterns; only text an app author wrote
 * comes through here.
 */
import { createRequire } from 'node:module';
import type * as re2js from 're2js';
import type { RE2JS } from 're2js';
import { onFirstUse, type ArgsProblem } from '../../plugins/sdk.js';

/** re2js, loaded by the first `@regex` compiled: most apps write none. */
const loadRe2js = onFirstUse(() => createRequire(import.meta.url)('re2js') as typeof re2js);

/** Longest pattern accepted: hand-written patterns are far shorter, and a long one is hard to review. */
export const MAX_PATTERN_LENGTH = 1000;
/**
 * Largest compiled program (RE2 instructions) accepted. Matching costs up to ~15 ns per
 * instruction per character when re2js's DFA gives up (measured: 996 instructions on 4096
 * characters, 70 ms), so this bound and MAX_REGEX_INPUT_LENGTH keep the worst match near that;
 * counted repetitions (`{1,500}`) are what make programs large, and `@max` bounds a length for free.
 */
export const MAX_PATTERN_PROGRAM_SIZE = 1000;
/**
 * Longest text a pattern is tried on; longer text fails. Values a pattern guards (codes, names,
 * identifiers) are far shorter; with a linear engine the bound is only about cost (see
 * MAX_PATTERN_PROGRAM_SIZE): typical patterns run at 5–30 ns per character, so 4096 characters
 * take well under a millisecond.
 */
export const MAX_REGEX_INPUT_LENGTH = 4096;

/** Why a pattern cannot run: what it uses that a linear-time engine cannot do, with a way out. */
const UNSUPPORTED_HINT =
  'rvm runs patterns on a linear-time engine (RE2 syntax): backreferences, lookahead, lookbehind, ' +
  'atomic groups and possessive quantifiers are not supported; match the whole value with ^…$ and ' +
  'character classes, or check the value in the handler';
const SYNTAX_HINT = 'patterns use RE2 syntax (https://github.com/google/re2/wiki/Syntax)';

/** Constructs RE2 refuses because no linear-time engine can run them, by the text re2js reports. */
const UNSUPPORTED: readonly { what: string; at: RegExp }[] = [
  { what: 'a backreference', at: /^\\(?:[1-9]|k)/ },
  { what: 'a lookahead', at: /^\(\?[=!]/ },
  { what: 'a lookbehind', at: /^\(\?<[=!]/ },
  { what: 'an atomic group', at: /^\(\?>/ },
  { what: 'a possessive quantifier', at: /^(?:[*+?]|\{[\d,]*\})\+/ },
];

/** A compiled pattern: `test` says whether the text contains a match. */
export interface CompiledPattern {
  test(text: string): boolean;
}

/** Compiles `source` (RE2 syntax, Unicode, search semantics) or says why it cannot run. */
export function compilePattern(source: string): CompiledPattern | ArgsProblem {
  if (source.length > MAX_PATTERN_LENGTH) return { message: `@regex pattern is longer than ${MAX_PATTERN_LENGTH} characters` };
  let re: RE2JS;
  try {
    re = loadRe2js().RE2JS.compile(source);
  } catch (error) {
    return syntaxProblem(error);
  }
  const size = re.programSize();
  if (size > MAX_PATTERN_PROGRAM_SIZE) {
    return {
      message: `@regex pattern compiles to ${size} instructions, more than ${MAX_PATTERN_PROGRAM_SIZE}`,
      hint: 'counted repetitions such as {1,500} make patterns large: write + or * and bound the length with @max(500)',
    };
  }
  return re;
}

/** Whether `compilePattern` refused the pattern. */
export function isProblem(compiled: CompiledPattern | ArgsProblem): compiled is ArgsProblem {
  return 'message' in compiled;
}

/**
 * The check `@regex` runs per value: the text contains a match and is at most
 * MAX_REGEX_INPUT_LENGTH characters. A pattern that does not compile matches nothing (the
 * compile error has been reported by then).
 */
export function patternMatcher(source: string): (text: string) => boolean {
  const re = compilePattern(source);
  if (isProblem(re)) return () => false;
  return (text) => text.length <= MAX_REGEX_INPUT_LENGTH && re.test(text);
}

function syntaxProblem(error: unknown): ArgsProblem {
  if (!(error instanceof loadRe2js().RE2JSSyntaxException))
    return { message: `@regex pattern does not compile: ${(error as Error).message}`, hint: SYNTAX_HINT };
  const at = error.input ?? '';
  const unsupported = UNSUPPORTED.find((u) => u.at.test(at));
  if (unsupported) return { message: `@regex pattern uses ${unsupported.what} (\`${at.slice(0, 12)}\`), which rvm cannot run`, hint: UNSUPPORTED_HINT };
  if (at.startsWith('\\u'))
    return { message: `@regex pattern does not compile: ${error.error}: \`${at}\``, hint: 'write a code point as \\x{00E9} (RE2 syntax), not \\u00E9' };
  return { message: `@regex pattern does not compile: ${error.error}${at ? `: \`${at}\`` : ''}`, hint: SYNTAX_HINT };
}
