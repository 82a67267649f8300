/**
 * Byte sizes as `@max_size` takes them: `'5MB'`, `'500 KB'`, `'1.5 MB'`, `'100'` (bytes), `'2GiB'`.
 * KB, MB and GB are binary (1024-based), as in Express's `bytes`, multer's docs and this app's
 * own `bodyLimit`, and as Windows shows file sizes: a file a user sees as "5 MB" on either
 * Windows (MiB) or macOS (10^6) then passes `@max_size('5MB')`. KiB, MiB and GiB are accepted as
 * the same units.
 */

/** Multipliers by unit (lower-case; no unit means bytes). */
const UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  byte: 1,
  bytes: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
};

/**
 * Largest upload limit accepted (1 TiB): far beyond any single upload a web form takes, and
 * a larger figure is almost surely a typo.
 */
export const MAX_UPLOAD_LIMIT = 1024 ** 4;

const SIZE = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*([a-z]*)\s*$/i;

/** The byte count a size text names (fractions of a byte cut), or null when it is not a size in 1 .. MAX_UPLOAD_LIMIT. */
export function parseByteSize(text: string): number | null {
  const m = SIZE.exec(text);
  if (!m) return null;
  const unit = UNITS[m[2]!.toLowerCase()];
  if (unit === undefined) return null;
  const bytes = Math.floor(Number(m[1]) * unit);
  return bytes >= 1 && bytes <= MAX_UPLOAD_LIMIT ? bytes : null;
}

const DISPLAY_UNITS: readonly [string, number][] = [
  ['GB', 1024 ** 3],
  ['MB', 1024 ** 2],
  ['KB', 1024],
];

/** A byte count for people: `5 MB`, `1.5 MB`, `500 KB`, else `1500 bytes` (never rounded). */
export function formatByteSize(bytes: number): string {
  for (const [name, unit] of DISPLAY_UNITS) {
    const value = bytes / unit;
    // Only figures with at most two decimals that are exact; anything else is shown in bytes.
    if (value >= 1 && Number.isInteger((bytes * 100) / unit)) return `${value} ${name}`;
  }
  return bytes === 1 ? '1 byte' : `${bytes} bytes`;
}
