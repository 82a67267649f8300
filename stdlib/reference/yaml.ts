/**
 * A YAML emitter for JSON data (the OpenAPI document): block mappings and sequences, plain
 * scalars only where no YAML 1.1 or 1.2 parser could read them as anything but that text,
 * literal blocks for multi-line text, double quotes (JSON escapes, valid YAML) for the rest.
 */

/** Spaces per nesting level. */
const INDENT = 2;
/** YAML limits an implicit key to 1024 characters; longer keys use the explicit `? key` form. */
const MAX_IMPLICIT_KEY = 1024;
/** Words YAML 1.1 (booleans, null) or 1.2 read as something other than text, in any case. */
const RESERVED = new Set(['y', 'n', 'yes', 'no', 'on', 'off', 'true', 'false', 'null', 'nan', 'inf']);
/** Text that is safe unquoted: starts with a letter, `_`, `/` or `$`, printable ASCII after. */
const PLAIN = /^[A-Za-z_/$][\x20-\x7e]*$/;
/** Characters that force quotes or a block: controls (but newline), DEL, C1, BOM, line/paragraph separators. */
const UNPRINTABLE = /[\x00-\x09\x0b-\x1f\x7f-\x9f\ufeff\ufffe\uffff\u2028\u2029\ud800-\udfff]/;
/** What double-quoted text must escape beyond JSON's escapes. */
const QUOTE_ESCAPED = /[\x7f-\x9f\ufeff\ufffe\uffff\u2028\u2029]/g;

/** The YAML text of a JSON value (objects, arrays, strings, finite numbers, booleans, null). */
export function toYaml(value: unknown): string {
  if (!isBlock(value)) return `${inline(value, INDENT)}\n`;
  const out: string[] = [];
  emitBlock(value, 0, out, '');
  out.push('');
  return out.join('\n');
}

/** Indentation strings by width, built once. */
const PADS: string[] = [];
function pad(indent: number): string {
  return (PADS[indent] ??= ' '.repeat(indent));
}

/** True for a non-empty mapping or sequence: written as a block over several lines. */
function isBlock(value: unknown): value is Record<string, unknown> | unknown[] {
  if (Array.isArray(value)) return value.length > 0;
  return isPlainObject(value) && Object.keys(value).length > 0;
}

/**
 * Appends the lines of a block at `indent` to `out`; the first line starts with `lead` instead
 * of the indentation (a sequence item's `- ` carries a nested block's first line).
 */
function emitBlock(value: Record<string, unknown> | unknown[], indent: number, out: string[], lead: string): void {
  const own = pad(indent);
  const inner = indent + INDENT;
  let first = lead === '' ? own : lead;
  if (Array.isArray(value)) {
    for (const item of value) {
      if (isBlock(item)) emitBlock(item, inner, out, `${first}- `);
      else out.push(`${first}- ${inline(item, inner)}`);
      first = own;
    }
    return;
  }
  for (const key of Object.keys(value)) {
    const item = value[key];
    const written = keyText(key);
    if (written.length > MAX_IMPLICIT_KEY) {
      out.push(`${first}? ${written}`);
      if (isBlock(item)) {
        out.push(`${own}:`);
        emitBlock(item, inner, out, '');
      } else {
        out.push(`${own}: ${inline(item, inner)}`);
      }
    } else if (isBlock(item)) {
      out.push(`${first}${written}:`);
      emitBlock(item, inner, out, '');
    } else {
      out.push(`${first}${written}: ${inline(item, inner)}`);
    }
    first = own;
  }
}

/** A scalar or an empty container on the current line; multi-line text continues at `indent`. */
function inline(value: unknown, indent: number): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'string') return stringText(value, indent);
  if (Array.isArray(value)) return '[]';
  return '{}';
}

/** A mapping key: plain when safe, else double-quoted (never a block). */
function keyText(key: string): string {
  return isPlainSafe(key) ? key : quoted(key);
}

/**
 * Double-quoted text: JSON's escapes are YAML's, and JSON already escapes C0 controls and lone
 * surrogates; the characters YAML also refuses raw (DEL, C1, BOM, non-characters, and the
 * line separators YAML 1.1 breaks on) are escaped too.
 */
function quoted(text: string): string {
  return JSON.stringify(text).replace(QUOTE_ESCAPED, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function stringText(text: string, indent: number): string {
  if (isPlainSafe(text)) return text;
  if (isBlockSafe(text)) {
    const body = text.endsWith('\n') ? text.slice(0, -1) : text;
    const pad = ' '.repeat(indent);
    const lines = body.split('\n').map((line) => (line === '' ? '' : pad + line));
    return `${text.endsWith('\n') ? '|' : '|-'}\n${lines.join('\n')}`;
  }
  return quoted(text);
}

/** True when `text` reads back as itself unquoted in block context. */
function isPlainSafe(text: string): boolean {
  if (!PLAIN.test(text) || RESERVED.has(text.toLowerCase())) return false;
  // `: ` starts a value and ` #` a comment; a trailing space or colon is lost or misread.
  return !text.includes(': ') && !text.includes(' #') && !text.endsWith(' ') && !text.endsWith(':');
}

/**
 * True when a literal block (`|` / `|-`) keeps `text` exactly: it has a line break, ends with
 * at most one, has no carriage return or other control character, and its first line starts
 * with a visible character (so the block's indentation is read from it).
 */
function isBlockSafe(text: string): boolean {
  if (!text.includes('\n') || text.includes('\r') || UNPRINTABLE.test(text) || text.endsWith('\n\n')) return false;
  return /^[^\s]/.test(text);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
