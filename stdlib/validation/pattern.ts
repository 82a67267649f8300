/**
 * `@regex` on the linear-time engine the SDK compiles patterns with (RE2 syntax). A pattern is
 * compiled once, when its validator is built; built-in validators keep their own vetted
 * JavaScript patterns, and only text an app author wrote comes through here.
 */
import { compilePattern, isPatternProblem } from '../../plugins/sdk.js';
import type { ArgsProblem, Pattern } from '../../plugins/sdk.js';

/**
 * Longest text a pattern is tried on; longer text fails. Values a pattern guards (codes, names,
 * identifiers) are far shorter; with a linear engine the bound is only about cost (see
 * the SDK's MAX_PATTERN_PROGRAM_SIZE): typical patterns run at 5–30 ns per character, so 4096 characters
 * take well under a millisecond, and the largest program on the longest text under 200 ms.
 */
export const MAX_REGEX_INPUT_LENGTH = 4096;

/** Compiles an `@regex` pattern, or says why it cannot run. */
export function compileRegexValidator(source: string): Pattern | ArgsProblem {
  return compilePattern(source, '@regex pattern');
}

/**
 * The check `@regex` runs per value: the text contains a match and is at most
 * MAX_REGEX_INPUT_LENGTH characters. A pattern that does not compile matches nothing (the
 * compile error has been reported by then).
 */
export function patternMatcher(source: string): (text: string) => boolean {
  const re = compileRegexValidator(source);
  if (isPatternProblem(re)) return () => false;
  return (text) => text.length <= MAX_REGEX_INPUT_LENGTH && re.test(text);
}
