/**
 * Texts an injection is made of, for property tests of the record stores: pieces of SQL syntax
 * and quoting of both dialects (SQLite, PostgreSQL), the test's own table and data words, mixed
 * with arbitrary text. NUL aside: it is refused as text before any store sees it.
 */
import fc from 'fast-check';

/** Quoting, comments, wildcards, placeholders and operators of either dialect, and two characters JavaScript and JSON treat apart. */
export const SQL_FRAGMENTS: readonly string[] = [
  "'",
  '"',
  ';',
  '--',
  '/*',
  '*/',
  '%',
  '_',
  '\\',
  '$1',
  '?',
  '`',
  ')',
  '(',
  "' OR '1'='1",
  '::text',
  '||',
  '\u2028',
  '😀',
];

/**
 * Up to five pieces joined: SQL_FRAGMENTS, the test's `words` (its tables, columns, an injection
 * aimed at them) and arbitrary graphemes. `minPieces` 1 keeps the empty text out.
 */
export function hostileSqlText(words: readonly string[], minPieces = 0): fc.Arbitrary<string> {
  return fc
    .array(fc.oneof(fc.constantFrom(...SQL_FRAGMENTS, ...words), fc.string({ unit: 'grapheme', maxLength: 6 })), { minLength: minPieces, maxLength: 5 })
    .map((parts) => parts.join(''))
    .filter((text) => !text.includes('\u0000'));
}
