/**
 * Patterns an app author wrote (`@regex`, the regex natives) on a linear-time engine: re2js, a
 * pure-JS port of RE2. Matching takes time proportional to the input's length times the
 * pattern's program size, never exponential, whatever either holds. A pattern is compiled once
 * per text and kept in a small cache, so a native called in a loop does not compile it again.
 */
import { createRequire } from 'node:module';
import type * as re2js from 're2js';
import type { RE2JS } from 're2js';
import type { ArgsProblem } from '../../vm/host/validators.js';
import { onFirstUse } from '../../vm/on-first-use.js';

/** re2js, loaded by the first pattern compiled: most apps write none. */
const loadRe2js = onFirstUse(() => createRequire(import.meta.url)('re2js') as typeof re2js);

/** Longest pattern accepted: hand-written patterns are far shorter, and a long one is hard to review. */
export const MAX_PATTERN_LENGTH = 1000;
/**
 * Largest compiled program (RE2 instructions) accepted. Matching costs up to ~15–40 ns per
 * instruction per character when re2js's DFA gives up (measured: 996 instructions on 4096
 * characters, 70–160 ms), so this bound and a bound on the input keep the worst match near that;
 * counted repetitions (`{1,500}`) are what make programs large.
 */
export const MAX_PATTERN_PROGRAM_SIZE = 1000;
/**
 * Compiled patterns kept, by their text; the least recently used one goes first. Few: re2js keeps
 * the DFA states a pattern has built with it, up to 8 MB each, and a pattern may come from a
 * request, so the cache holds at most 32 × 8 MB whatever clients send.
 */
const PATTERN_CACHE_SIZE = 32;

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

/** A compiled pattern (RE2 syntax, Unicode, search semantics). */
export interface Pattern {
  /** RE2 instructions: the cost of scanning one character grows with it. */
  readonly programSize: number;
  /** The name of each numbered group (index 1 on; null when unnamed); index 0, the whole match, is null. */
  readonly groupNames: readonly (string | null)[];
  /** Whether the text contains a match. */
  test(text: string): boolean;
  /**
   * The matches from left to right, without overlap (an empty match right after another is
   * skipped, as RE2 does): for each, the UTF-16 offsets `[start, end]` of the whole match and
   * then of every group in turn, -1 for a group that took no part.
   */
  matches(text: string): Generator<number[]>;
}

const cache = new Map<string, Pattern | ArgsProblem>();

/**
 * Compiles `source`, or says why it cannot run; `subject` names the pattern in the messages
 * (`@regex pattern`, `pattern`).
 */
export function compilePattern(source: string, subject = 'pattern'): Pattern | ArgsProblem {
  const key = `${subject}\0${source}`;
  const cached = cache.get(key);
  if (cached !== undefined) {
    // Map keeps insertion order: moving the hit to the end makes the first key the least recently used.
    cache.delete(key);
    cache.set(key, cached);
    return cached;
  }
  const compiled = compileUncached(source, subject);
  if (cache.size >= PATTERN_CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(key, compiled);
  return compiled;
}

/** Whether `compilePattern` refused the pattern. */
export function isPatternProblem(compiled: Pattern | ArgsProblem): compiled is ArgsProblem {
  return 'message' in compiled;
}

function compileUncached(source: string, subject: string): Pattern | ArgsProblem {
  if (source.length > MAX_PATTERN_LENGTH) return { message: `${subject} is longer than ${MAX_PATTERN_LENGTH} characters` };
  let re: RE2JS;
  try {
    re = loadRe2js().RE2JS.compile(source);
  } catch (error) {
    return syntaxProblem(error, subject);
  }
  const programSize = re.programSize();
  if (programSize > MAX_PATTERN_PROGRAM_SIZE) {
    return {
      message: `${subject} compiles to ${programSize} instructions, more than ${MAX_PATTERN_PROGRAM_SIZE}`,
      hint: 'counted repetitions such as {1,500} make patterns large: write + or * and bound the length apart (@max(500) on a field, len() in code)',
    };
  }
  const groupNames: (string | null)[] = new Array(re.groupCount() + 1).fill(null);
  for (const [name, index] of Object.entries(re.namedGroups())) groupNames[index] = name;
  return {
    programSize,
    groupNames,
    test: (text) => re.test(text),
    *matches(text) {
      const matcher = re.matcher(text);
      while (matcher.find()) {
        const spans: number[] = [];
        for (let group = 0; group < groupNames.length; group++) spans.push(matcher.start(group), matcher.end(group));
        yield spans;
      }
    },
  };
}

function syntaxProblem(error: unknown, subject: string): ArgsProblem {
  if (!(error instanceof loadRe2js().RE2JSSyntaxException)) return { message: `${subject} does not compile: ${(error as Error).message}`, hint: SYNTAX_HINT };
  const at = error.input ?? '';
  const unsupported = UNSUPPORTED.find((u) => u.at.test(at));
  if (unsupported) return { message: `${subject} uses ${unsupported.what} (\`${at.slice(0, 12)}\`), which rvm cannot run`, hint: UNSUPPORTED_HINT };
  if (at.startsWith('\\u'))
    return { message: `${subject} does not compile: ${error.error}: \`${at}\``, hint: 'write a code point as \\x{00E9} (RE2 syntax), not \\u00E9' };
  return { message: `${subject} does not compile: ${error.error}${at ? `: \`${at}\`` : ''}`, hint: SYNTAX_HINT };
}
