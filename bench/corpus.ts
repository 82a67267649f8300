/**
 * A generated, realistic corpus of route files for the benchmarks: each file holds two routes
 * (one with guards, a query block and a loop-heavy handler; one with a validate block), and a
 * `fn` helper, about 40 lines in all. Names carry the file number so the app-wide namespace
 * never clashes.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** One generated source file. */
export interface CorpusFile {
  /** Path relative to the app directory, with `/` separators. */
  file: string;
  source: string;
}

/** How many route files the corpus holds by default: the size of a mid-sized real API. */
export const DEFAULT_FILE_COUNT = 200;

/** Route files go into this many folders, so middleware and paths nest as in a real app. */
const FOLDER_COUNT = 10;

/**
 * The guards the corpus routes use, defined in the app itself so the corpus loads with nothing
 * but the core plugin (the built-in guards arrive with later plugins).
 */
const GUARDS_SOURCE = `/// Requires a header to be present.
guard_definition has_header(name) {
  if request.headers[name] == null {
    fail 401 "missing header \${name}"
  }
}

/// Requires a numeric level header of at least n.
guard_definition min_level(n) {
  level = int(request.headers['x-level'] ?? '0')
  if level < n {
    fail 403 'Level too low'
  }
}
`;

/** The source of route file number `n`. */
export function routeFileSource(n: number): string {
  return `/// Lists the orders of shop ${n}, with a running total.
route GET /shop${n}/orders/:id {
  guard has_header('x-client')
  guard min_level(${n % 3})
  query {
    /// Page number, from 1.
    page?: int @min(1) @default(1)
    tag?: text @maxLength(40)
  }
  items = [3, 1, 4, 1, 5, 9, 2, 6]
  total = 0
  count = 0
  for item in items {
    if item % 2 == 0 {
      total = total + item * 2
    } else if item > 4 {
      total = total + item
    } else {
      continue
    }
    count = count + 1
  }
  label = "order \${params.id} of shop ${n}"
  response.ok({ id: params.id, total: discount_${n}(total, 10), count: count, label: upper(label) })
}

/// Creates an order in shop ${n}.
route POST /shop${n}/orders {
  validate {
    email: text @required @email
    quantity: int @min(1) @max(100)
    note?: text @maxLength(500)
  }
  lines = {}
  i = 0
  while i < 3 {
    lines["line\${i}"] = { line: i, text: "item \${i}" }
    i = i + 1
  }
  response.created({ shop: ${n}, body: request.body, lines: len(keys(lines)) })
}

/// Takes rate percent off an amount.
fn discount_${n}(amount, rate) {
  return amount - amount * rate / 100
}
`;
}

/** The corpus as files in memory: `count` route files in folders, plus the guard definitions. */
export function generateCorpus(count: number = DEFAULT_FILE_COUNT): CorpusFile[] {
  const files: CorpusFile[] = [{ file: 'guards.rvm', source: GUARDS_SOURCE }];
  for (let n = 0; n < count; n++) {
    files.push({ file: `area${n % FOLDER_COUNT}/shop${n}.rvm`, source: routeFileSource(n) });
  }
  return files;
}

/** Total number of source lines in the corpus (what the lines/s figures divide by). */
export function countLines(files: readonly CorpusFile[]): number {
  let lines = 0;
  for (const f of files) lines += f.source.split('\n').length;
  return lines;
}

/** Writes the corpus into `dir` (created as needed) as an app directory. */
export function writeCorpus(dir: string, files: readonly CorpusFile[]): void {
  for (const f of files) {
    const path = join(dir, f.file);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, f.source);
  }
}
