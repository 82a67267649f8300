/**
 * The one diagnostic type. Every problem rvm finds in a source file, an artefact or a link step
 * is reported as a Diagnostic: a stable `code` (listed in spec/errors.md), a location and a hint.
 */

/** Where a diagnostic points: 1-based line and column in `file` (a path relative to the app). */
export interface Location {
  file: string;
  line: number;
  col: number;
}

export type Severity = 'error' | 'warning';

/** One located problem. `length` is how many columns the caret underlines (at least 1). */
export interface Diagnostic extends Location {
  severity: Severity;
  code: string;
  message: string;
  hint?: string;
  /** The text of the source line, when the source was at hand. */
  sourceLine?: string;
  length?: number;
}

/** Builds a diagnostic, taking the source line from `source` when given. */
export function diagnostic(
  code: string,
  message: string,
  at: Location,
  options: { hint?: string; source?: string; length?: number; severity?: Severity } = {},
): Diagnostic {
  const d: Diagnostic = { severity: options.severity ?? 'error', code, message, file: at.file, line: at.line, col: at.col };
  if (options.hint) d.hint = options.hint;
  if (options.length && options.length > 1) d.length = options.length;
  if (options.source !== undefined) d.sourceLine = lineOf(options.source, at.line);
  return d;
}

/** The text of 1-based `line` in `source`, without its line break. */
export function lineOf(source: string, line: number): string {
  let start = 0;
  for (let n = 1; n < line; n++) {
    const next = source.indexOf('\n', start);
    if (next < 0) return '';
    start = next + 1;
  }
  const end = source.indexOf('\n', start);
  return source.slice(start, end < 0 ? source.length : end).replace(/\r$/, '');
}

/**
 * Renders a diagnostic the way compilers do:
 *
 *     app/users.rvm:3:9: error E_UNKNOWN_FUNCTION: unknown function 'lenn'
 *        3 | x = lenn(body)
 *          |     ^^^^
 *       hint: did you mean 'len'?
 */
export function formatDiagnostic(d: Diagnostic): string {
  const head = `${d.file}:${d.line}:${d.col}: ${d.severity} ${d.code}: ${d.message}`;
  const lines = [head];
  if (d.sourceLine !== undefined) {
    const gutter = String(d.line);
    const pad = ' '.repeat(gutter.length);
    // Tabs keep their width under the caret so it lines up in a terminal.
    const lead = d.sourceLine.slice(0, Math.max(0, d.col - 1)).replace(/[^\t]/g, ' ');
    lines.push(`  ${gutter} | ${d.sourceLine}`);
    lines.push(`  ${pad} | ${lead}${'^'.repeat(Math.max(1, d.length ?? 1))}`);
  }
  if (d.hint) lines.push(`  hint: ${d.hint}`);
  return lines.join('\n');
}

/**
 * Diagnostics in the order they are shown: by file, then line, then column (ties keep their
 * order); a diagnostic repeated at the same place with the same code and message is shown once.
 */
export function sortDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  const unique = diagnostics.filter((d) => {
    const key = `${d.file}\0${d.line}\0${d.col}\0${d.code}\0${d.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  // Array.prototype.sort is stable, so equal positions keep the order the phases found them in.
  return unique.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || a.col - b.col));
}

/** Thrown where diagnostics must abort an operation (a damaged bundle, a link failure); they are kept sorted. */
export class DiagnosticError extends Error {
  readonly diagnostics: Diagnostic[];

  constructor(diagnostics: Diagnostic[]) {
    const sorted = sortDiagnostics(diagnostics);
    super(sorted.map(formatDiagnostic).join('\n\n'));
    this.name = 'DiagnosticError';
    this.diagnostics = sorted;
  }
}

/** Damerau–Levenshtein distance with an early cut-off; used for "did you mean" hints. */
function distance(a: string, b: string, cutoff: number): number {
  if (Math.abs(a.length - b.length) > cutoff) return cutoff + 1;
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) rows.push([i]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = v;
    }
  }
  return rows[a.length]![b.length]!;
}

/** The candidate nearest to `name`, if one is close enough to be a plausible typo. */
export function nearest(name: string, candidates: Iterable<string>): string | undefined {
  const lower = name.toLowerCase();
  const cutoff = Math.max(1, Math.min(3, Math.floor(name.length / 3)));
  let best: string | undefined;
  let bestScore = cutoff + 1;
  for (const c of candidates) {
    const score = c.toLowerCase() === lower ? 0 : distance(lower, c.toLowerCase(), cutoff);
    if (score < bestScore || (score === bestScore && best !== undefined && c < best)) {
      best = c;
      bestScore = score;
    }
  }
  return bestScore <= cutoff ? best : undefined;
}

/** "did you mean 'x'?" or undefined. */
export function didYouMean(name: string, candidates: Iterable<string>): string | undefined {
  const n = nearest(name, candidates);
  return n === undefined || n === name ? undefined : `did you mean '${n}'?`;
}
