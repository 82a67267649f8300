/**
 * Core regex natives: regex_match, regex_find, regex_find_all, regex_replace and regex_split, on
 * the linear-time engine `@regex` uses (the SDK's compilePattern: RE2 syntax, compiled once per
 * pattern text). Matching costs the text's length times the pattern's program size, so each
 * call charges that to the request's budget and refuses a text whose scan would cost more than
 * one call may; what it builds holds to MAX_TEXT_LENGTH and MAX_LIST_LENGTH.
 */
import { RUNTIME, MAX_LIST_LENGTH, RvmError, checkLength, compilePattern, isPatternProblem, setField } from '../../plugins/sdk.js';
import type { NativeBudget, PluginApi, Pattern, Value, ValueObject } from '../../plugins/sdk.js';

/**
 * Work units per character a scan costs beside one per instruction. Measured with re2js (Node 20,
 * x64): finding every match of `\s+` in 1 MB of words, 0.5 µs a character; a 996-instruction
 * program the DFA gives up on, 38 µs a character. A unit is about what a VM loop iteration costs
 * (25–70 ns), so (program size + 10) units a character covers both.
 */
const UNITS_PER_CHAR = 10;
/** Most units one call may scan: about 0.3 s in the worst case measured (0.6 s on a loaded machine), within the CPU budget. */
const MAX_REGEX_WORK = 8 * 1024 * 1024;

const textAndPattern = [
  { name: 's', type: 'text' },
  { name: 'pattern', type: 'text', doc: 'A regular expression in RE2 syntax (Unicode), without slashes.' },
] as const;

/** Registers regex_match, regex_find, regex_find_all, regex_replace and regex_split. */
export function registerRegex(rvm: PluginApi): void {
  rvm.native('regex_match', (ctx, s, pattern) => scanning(ctx.budget, 'regex_match', s, pattern).test(s), {
    params: textAndPattern,
    returns: 'bool',
    doc: "True when the text contains a match of the pattern (anchor it with ^ and $ to match the whole text): regex_match('order-42', '^[a-z]+-\\\\d+$') is true. Patterns use RE2 syntax on a linear-time engine: backreferences and lookaround are an invalid_regex error, as is a pattern that does not compile.",
  });

  rvm.native(
    'regex_find',
    (ctx, s, pattern) => {
      const re = scanning(ctx.budget, 'regex_find', s, pattern);
      for (const spans of re.matches(s)) return new MatchReader(s, re).read(spans);
      return null;
    },
    {
      params: textAndPattern,
      returns: 'object?',
      doc: "The first match, or null: {match, index, groups, named}, where `index` counts characters (code points) before it, `groups` lists the text of every numbered group (null for one that took no part) and `named` holds the named groups ((?P<year>\\\\d+) or (?<year>\\\\d+)) by name: regex_find('v1.25', '(\\\\d+)\\\\.(\\\\d+)') is {match: '1.25', index: 1, groups: ['1', '25'], named: {}}.",
    },
  );

  rvm.native(
    'regex_find_all',
    (ctx, s, pattern) => {
      const re = scanning(ctx.budget, 'regex_find_all', s, pattern);
      const reader = new MatchReader(s, re);
      const found: Value[] = [];
      for (const spans of re.matches(s)) {
        if (found.length === MAX_LIST_LENGTH) tooManyItems('regex_find_all');
        ctx.budget.chargeItems(re.groupNames.length + 2);
        found.push(reader.read(spans));
      }
      return found;
    },
    {
      params: textAndPattern,
      returns: 'list',
      doc: 'Every match from left to right, without overlap, each as regex_find gives it ({match, index, groups, named}); [] when there is none. More than 4 Mi matches is a list_too_long error.',
    },
  );

  rvm.native(
    'regex_replace',
    (ctx, s, pattern, replacement) => {
      const re = scanning(ctx.budget, 'regex_replace', s, pattern);
      const template = parseReplacement(replacement, re);
      const parts: string[] = [];
      let length = 0;
      const add = (part: string) => {
        length = checkLength('regex_replace', length + part.length);
        parts.push(part);
      };
      let last = 0;
      for (const spans of re.matches(s)) {
        add(s.slice(last, spans[0]));
        for (const piece of template) add(typeof piece === 'string' ? piece : (groupText(s, spans, piece) ?? ''));
        last = spans[1]!;
      }
      add(s.slice(last));
      ctx.budget.chargeText(length);
      return parts.join('');
    },
    {
      params: [...textAndPattern, { name: 'replacement', type: 'text' }],
      returns: 'text',
      doc: `Replaces every match with the replacement, in which $0 is the whole match, $1 to $9 a numbered group, \${12} or \${name} any group, and $$ a dollar sign (a group that took no part gives ''): regex_replace('2024-05-06', '(\\\\d+)-(\\\\d+)-(\\\\d+)', '$3/$2/$1') is '06/05/2024'. Any other $, or a group the pattern does not have, is an invalid_regex error; a result over 16 Mi characters a text_too_long error.`,
    },
  );

  rvm.native(
    'regex_split',
    (ctx, s, pattern) => {
      const re = scanning(ctx.budget, 'regex_split', s, pattern);
      const pieces: string[] = [];
      let last = 0;
      for (const [start, end] of re.matches(s)) {
        // An empty match at either end cuts nothing off (as JavaScript's split): regex_split('ab', '') is ['a', 'b'].
        if (end === start && (start === 0 || start === s.length)) continue;
        if (pieces.length === MAX_LIST_LENGTH - 1) tooManyItems('regex_split');
        pieces.push(s.slice(last, start));
        last = end!;
      }
      pieces.push(s.slice(last));
      ctx.budget.chargeItems(pieces.length);
      return pieces;
    },
    {
      params: textAndPattern,
      returns: 'list',
      doc: "Splits the text at every match of the pattern: regex_split('a, b;c', '[,;]\\\\s*') is ['a', 'b', 'c']; the groups of the pattern are not included; an empty match splits between characters. More than 4 Mi pieces is a list_too_long error.",
    },
  );
}

/** The compiled pattern, its scan of `text` charged; refuses a pattern that cannot run or a scan that would cost too much. */
function scanning(budget: NativeBudget, fn: string, text: string, source: string): Pattern {
  const re = compilePattern(source);
  if (isPatternProblem(re)) throw new RvmError(`${fn}(): ${re.message}${re.hint ? ` (${re.hint})` : ''}`, RUNTIME.invalid_regex);
  const work = text.length * (re.programSize + UNITS_PER_CHAR);
  if (work > MAX_REGEX_WORK) {
    const longest = Math.floor(MAX_REGEX_WORK / (re.programSize + UNITS_PER_CHAR));
    throw new RvmError(`${fn}(): a text of ${text.length} characters is longer than this pattern may scan in one call (${longest})`, RUNTIME.regex_too_costly);
  }
  budget.charge(work);
  return re;
}

/**
 * Reads matches of one text, in order, into the language's match objects. Counts code points as
 * it goes, so the index of each match costs the distance from the last, not from the start.
 */
class MatchReader {
  #offset = 0;
  #index = 0;

  constructor(
    private readonly text: string,
    private readonly re: Pattern,
  ) {}

  read(spans: number[]): ValueObject {
    const groups: Value[] = [];
    const named: ValueObject = {};
    for (let g = 1; g < this.re.groupNames.length; g++) {
      const value = groupText(this.text, spans, g);
      groups.push(value);
      const name = this.re.groupNames[g];
      if (name) setField(named, name, value);
    }
    return { match: groupText(this.text, spans, 0), index: this.#codePointsBefore(spans[0]!), groups, named };
  }

  #codePointsBefore(offset: number): number {
    for (; this.#offset < offset; this.#offset++, this.#index++) {
      const c = this.text.charCodeAt(this.#offset);
      // A surrogate pair counts once; RE2 never starts a match inside one.
      if (c >= 0xd800 && c <= 0xdbff && (this.text.charCodeAt(this.#offset + 1) & 0xfc00) === 0xdc00) this.#offset++;
    }
    return this.#index;
  }
}

/** The text group `g` of a match took, or null when it took no part. */
function groupText(text: string, spans: number[], g: number): string | null {
  const start = spans[2 * g]!;
  return start < 0 ? null : text.slice(start, spans[2 * g + 1]);
}

/** A replacement template: literal texts and group numbers. */
type Replacement = (string | number)[];

const GROUP_REFERENCE = /\$(?:(\$)|(\d)|\{(\w+)\}|)/g;

/** Reads `$$`, `$n`, `${n}` and `${name}` in a replacement; anything else after `$` is an invalid_regex error. */
function parseReplacement(replacement: string, re: Pattern): Replacement {
  const template: Replacement = [];
  let last = 0;
  for (const reference of replacement.matchAll(GROUP_REFERENCE)) {
    const [whole, dollar, digit, braced] = reference;
    if (reference.index > last) template.push(replacement.slice(last, reference.index));
    last = reference.index + whole.length;
    if (dollar !== undefined) {
      template.push('$');
      continue;
    }
    const name = digit ?? braced;
    const group = name === undefined ? -1 : /^\d+$/.test(name) ? Number(name) : re.groupNames.indexOf(name);
    if (group < 0 || group >= re.groupNames.length) {
      const what =
        name === undefined ? `a lone $ at ${reference.index} (write $$ for a dollar sign)` : `$${digit ?? `{${braced}}`}, a group the pattern does not have`;
      throw new RvmError(`regex_replace(): the replacement has ${what}`, RUNTIME.invalid_regex);
    }
    template.push(group);
  }
  if (last < replacement.length) template.push(replacement.slice(last));
  return template;
}

function tooManyItems(fn: string): never {
  throw new RvmError(`${fn}() would build a list of more than ${MAX_LIST_LENGTH} items`, RUNTIME.list_too_long);
}
