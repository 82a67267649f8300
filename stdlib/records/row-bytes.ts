/**
 * The charge of a read row, alone in its module: the SQLite reader processes (sqlite-reader-process.ts)
 * count it too and import nothing else of rvm, so they start quickly.
 */

/**
 * What a read row is charged for: per column a value's slot and box, plus a text's characters
 * twice (the driver's string, one or two bytes a character, and what decoding builds of it: a
 * list or object column parsed, the JSON answer). A length sum, not a serialisation: cheap enough
 * for every row of every listing.
 */
export const BYTES_PER_VALUE = 16;
export const BYTES_PER_CHAR = 2;

/** The memory one row as the driver returned it (an array of columns, text or numbers) is charged for. */
export function rowBytes(raw: readonly unknown[]): number {
  let bytes = raw.length * BYTES_PER_VALUE;
  for (let i = 0; i < raw.length; i++) {
    const value = raw[i];
    if (typeof value === 'string') bytes += value.length * BYTES_PER_CHAR;
  }
  return bytes;
}
