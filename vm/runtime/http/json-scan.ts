/**
 * A JSON text checked without building it. A large body is mostly what validation drops: 1 MiB
 * of `{}` in an undeclared field is 349,000 objects, 21 MB of heap that live until the request
 * ends and make the collector copy them from space to space. Scanning checks the whole text
 * against the JSON grammar (so a body is refused exactly when JSON.parse would refuse it) and
 * notes where each top-level member's value lies; validation then parses only the members it
 * declares, and the rest never exists as objects.
 */

/** Where a top-level object's members lie in the text: key → [start, end) of its value (the last one of a repeated key, as JSON.parse keeps). */
export type MemberSpans = Map<string, readonly [number, number]>;

/** The outcome of a scan: the members of a top-level object, or `other` for any other value; null when the text is not JSON. */
export type JsonScan = { kind: 'object'; members: MemberSpans } | { kind: 'other' } | null;

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

/** Thrown inside the scanner at the first character that breaks the grammar. */
class NotJson extends Error {}
const NOT_JSON = new NotJson();

/** Scans `text` as one JSON value (RFC 8259, as JSON.parse reads it) without allocating its values. */
export function scanJson(text: string): JsonScan {
  const scanner = new Scanner(text);
  try {
    scanner.space();
    let result: JsonScan;
    if (text.charCodeAt(scanner.at) === OPEN_BRACE) result = { kind: 'object', members: scanner.topObject() };
    else {
      scanner.value();
      result = { kind: 'other' };
    }
    scanner.space();
    return scanner.at === text.length ? result : null;
  } catch (err) {
    if (err === NOT_JSON) return null;
    throw err;
  }
}

/**
 * The declared members of a scanned object, each parsed alone, as own data properties (a
 * `__proto__` member stays data, as JSON.parse makes it).
 */
export function projectMembers(text: string, members: MemberSpans, names: Iterable<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of names) {
    const span = members.get(name);
    if (span === undefined) continue;
    Object.defineProperty(out, name, { value: JSON.parse(text.slice(span[0], span[1])), writable: true, enumerable: true, configurable: true });
  }
  return out;
}

class Scanner {
  at = 0;

  constructor(private readonly text: string) {}

  space(): void {
    const text = this.text;
    let at = this.at;
    for (;;) {
      const c = text.charCodeAt(at);
      if (c !== SPACE && c !== LF && c !== CR && c !== TAB) break;
      at++;
    }
    this.at = at;
  }

  /** The top-level object, noting each member's value span. */
  topObject(): MemberSpans {
    const members: MemberSpans = new Map();
    this.at++;
    this.space();
    if (this.text.charCodeAt(this.at) === CLOSE_BRACE) {
      this.at++;
      return members;
    }
    for (;;) {
      const keyStart = this.at;
      this.string();
      const key = JSON.parse(this.text.slice(keyStart, this.at)) as string;
      this.space();
      this.expect(COLON);
      this.space();
      const start = this.at;
      this.value();
      members.delete(key);
      members.set(key, [start, this.at]);
      this.space();
      if (this.separator(CLOSE_BRACE)) return members;
      this.space();
    }
  }

  value(): void {
    const c = this.text.charCodeAt(this.at);
    if (c === OPEN_BRACE) this.object();
    else if (c === OPEN_BRACKET) this.array();
    else if (c === QUOTE) this.string();
    else if (c === MINUS || (c >= ZERO && c <= NINE)) this.number();
    else if (c === 0x74) this.word('true');
    else if (c === 0x66) this.word('false');
    else if (c === 0x6e) this.word('null');
    else throw NOT_JSON;
  }

  private object(): void {
    this.at++;
    this.space();
    if (this.text.charCodeAt(this.at) === CLOSE_BRACE) {
      this.at++;
      return;
    }
    for (;;) {
      this.string();
      this.space();
      this.expect(COLON);
      this.space();
      this.value();
      this.space();
      if (this.separator(CLOSE_BRACE)) return;
      this.space();
    }
  }

  private array(): void {
    this.at++;
    this.space();
    if (this.text.charCodeAt(this.at) === CLOSE_BRACKET) {
      this.at++;
      return;
    }
    for (;;) {
      this.value();
      this.space();
      if (this.separator(CLOSE_BRACKET)) return;
      this.space();
    }
  }

  /** After an item: true at the closing bracket, false after a comma; anything else is not JSON. */
  private separator(close: number): boolean {
    const c = this.text.charCodeAt(this.at++);
    if (c === close) return true;
    if (c === COMMA) return false;
    throw NOT_JSON;
  }

  private string(): void {
    const text = this.text;
    if (text.charCodeAt(this.at) !== QUOTE) throw NOT_JSON;
    let at = this.at + 1;
    for (;;) {
      const c = text.charCodeAt(at);
      if (c === QUOTE) break;
      // NaN past the end; control characters must be escaped.
      if (!(c >= SPACE)) throw NOT_JSON;
      if (c === BACKSLASH) {
        const e = text.charCodeAt(at + 1);
        if (e === 0x75) {
          for (let i = 2; i < 6; i++) if (!isHex(text.charCodeAt(at + i))) throw NOT_JSON;
          at += 6;
          continue;
        }
        // " \ / b f n r t
        if (e !== QUOTE && e !== BACKSLASH && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) throw NOT_JSON;
        at += 2;
        continue;
      }
      at++;
    }
    this.at = at + 1;
  }

  private number(): void {
    const text = this.text;
    let at = this.at;
    if (text.charCodeAt(at) === MINUS) at++;
    const first = text.charCodeAt(at);
    if (first === ZERO) at++;
    else if (first > ZERO && first <= NINE) at = digits(text, at);
    else throw NOT_JSON;
    if (text.charCodeAt(at) === DOT) {
      const end = digits(text, at + 1);
      if (end === at + 1) throw NOT_JSON;
      at = end;
    }
    const e = text.charCodeAt(at);
    if (e === 0x65 || e === 0x45) {
      at++;
      const sign = text.charCodeAt(at);
      if (sign === PLUS || sign === MINUS) at++;
      const end = digits(text, at);
      if (end === at) throw NOT_JSON;
      at = end;
    }
    this.at = at;
  }

  private word(word: string): void {
    if (!this.text.startsWith(word, this.at)) throw NOT_JSON;
    this.at += word.length;
  }

  private expect(c: number): void {
    if (this.text.charCodeAt(this.at) !== c) throw NOT_JSON;
    this.at++;
  }
}

function digits(text: string, at: number): number {
  for (;;) {
    const c = text.charCodeAt(at);
    if (c < ZERO || c > NINE || Number.isNaN(c)) return at;
    at++;
  }
}

function isHex(c: number): boolean {
  return (c >= ZERO && c <= NINE) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}
