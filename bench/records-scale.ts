/**
 * Records at scale (bench/results/README.md, records-scale.ts): a million users in a SQLite file through the
 * store (SqliteStore, as the records plugin uses it), then what a request pays on that table:
 * `find` by id, and `page` through it by keyset cursor — the first page against page 10,000
 * (rows 199,981–200,000), by id and newest-first within a role, with `offset` to the same place
 * for contrast. Prints ms per operation and the process's resident size.
 *
 * Env: BENCH_SCALE_USERS (default 1,000,000), BENCH_SCALE_PAGES (default 10,000). Always exits 0.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SqliteStore } from '../stdlib/records/sqlite.js';
import type { OrderKey, Query, Row, StoredValue, TableSpec } from '../stdlib/records/store.js';
import { fmt, formatTable, machineDescription, median } from './util.js';

const USERS = Math.floor(Number(process.env.BENCH_SCALE_USERS) || 1_000_000);
const PAGES = Math.floor(Number(process.env.BENCH_SCALE_PAGES) || 10_000);
/** Rows per page: `T.page`'s usual size in the showcase. */
const PAGE_SIZE = 20;
/** Inserts per transaction while loading: one fsync-free WAL commit per batch keeps loading to a minute. */
const BATCH = 10_000;
/** Finds measured, on ids spread over the whole table. */
const FINDS = 10_000;
/** Repetitions of a single-page measurement; the median is reported. */
const REPEATS = 15;

const USER: TableSpec = {
  name: 'User',
  file: 'bench/apps/records/types.rvm',
  line: 2,
  col: 1,
  columns: [
    { name: 'email', type: 'text', optional: false, unique: true, index: false },
    { name: 'name', type: 'text', optional: false, unique: false, index: false },
    { name: 'role', type: 'text', optional: false, default: 'user', unique: false, index: true },
  ],
};

/** The keyset position after `row` in `order` (store.ts Query.after): its order-key values, then its id. */
function afterRow(order: readonly OrderKey[], row: Row): StoredValue[] {
  return [...order.map((k) => row[k.field] ?? null), row.id ?? null];
}

function ms(since: number): number {
  return performance.now() - since;
}

/** The median time of `REPEATS` runs of `work`, in ms. */
async function timeOf(work: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const started = performance.now();
    await work();
    times.push(ms(started));
  }
  return median(times);
}

async function load(store: SqliteStore): Promise<{ ids: string[]; seconds: number }> {
  const ids: string[] = [];
  const stride = Math.max(1, Math.floor(USERS / FINDS));
  const started = performance.now();
  for (let done = 0; done < USERS; ) {
    const tx = await store.begin();
    for (const end = Math.min(USERS, done + BATCH); done < end; done++) {
      const row = await tx.insert('User', { email: `user-${done}@example.com`, name: `User ${done}`, role: done % 4 === 3 ? 'admin' : 'user' });
      if (done % stride === 0) ids.push(row.id as string);
    }
    await tx.commit();
    if (done % (BATCH * 20) === 0) console.error(`loaded ${fmt(done)} users (${fmt(ms(started) / 1000, 1)} s)`);
  }
  return { ids, seconds: ms(started) / 1000 };
}

/** Walks PAGES pages by cursor: the whole walk's time and the cursor position of the last page. */
async function walk(store: SqliteStore, filter: Query['filter'], order: OrderKey[]): Promise<{ total: number; before: StoredValue[] }> {
  let after: StoredValue[] | undefined;
  let before: StoredValue[] | undefined;
  const started = performance.now();
  for (let page = 1; page < PAGES; page++) {
    const rows = await store.select('User', { filter, order, limit: PAGE_SIZE, offset: 0, ...(after ? { after } : {}) });
    if (rows.length < PAGE_SIZE) throw new Error(`the table ended at page ${page}`);
    before = afterRow(order, rows[rows.length - 1]!);
    after = before;
  }
  return { total: ms(started), before: before! };
}

/**
 * Page 1 against page PAGES by cursor, each the median of REPEATS; the cursor of page PAGES comes
 * from walking there page by page (an index serves both orders measured, so each page is a walk of it).
 */
async function paging(store: SqliteStore, label: string, filter: Query['filter'], order: OrderKey[]): Promise<string[]> {
  const walked = await walk(store, filter, order);
  const before = walked.before;
  const note = `walk to it ${fmt(walked.total / 1000, 1)} s, ${fmt(walked.total / (PAGES - 1), 3)} ms/page`;
  const first = await timeOf(async () => store.select('User', { filter, order, limit: PAGE_SIZE, offset: 0 }));
  const deep = await timeOf(async () => store.select('User', { filter, order, limit: PAGE_SIZE, offset: 0, after: before }));
  return [`${label}: page 1 vs page ${fmt(PAGES)} (cursor)`, `${fmt(first, 3)} ms vs ${fmt(deep, 3)} ms`, note];
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-bench-scale-'));
  const path = join(dir, 'data.sqlite');
  const store = new SqliteStore(path);
  const rows: string[][] = [];
  try {
    await store.sync([USER], { allowDestructive: false });
    const { ids, seconds } = await load(store);
    const sizeMb = (statSync(path).size + (statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0)) / 2 ** 20;
    rows.push(['load (insert through the store, 10,000 per transaction)', `${fmt(USERS / seconds)} rows/s`, `${fmt(seconds, 1)} s, file ${fmt(sizeMb)} MiB`]);

    const finds: number[] = [];
    for (let i = 0; i < FINDS; i++) {
      const id = ids[(i * 7919) % ids.length]!;
      const t = performance.now();
      await store.find('User', id);
      finds.push(ms(t));
    }
    rows.push([
      `find by id (${fmt(FINDS)} ids across the table)`,
      `${fmt(median(finds), 3)} ms median`,
      `p99 ${fmt(finds.sort((a, b) => a - b)[Math.floor(FINDS * 0.99)]!, 3)} ms`,
    ]);

    rows.push(await paging(store, 'page by id', {}, []));
    const deepOffset = await timeOf(async () => store.select('User', { filter: {}, order: [], limit: PAGE_SIZE, offset: (PAGES - 1) * PAGE_SIZE }));
    rows.push([`  the same page ${fmt(PAGES)} by offset`, `${fmt(deepOffset, 3)} ms`, '']);
    rows.push(await paging(store, "page {role: 'user'} newest first", { role: 'user' }, [{ field: 'created_at', desc: true }]));

    const rss = process.memoryUsage().rss / 2 ** 20;
    console.log(`\nRecords at scale — ${machineDescription()}`);
    console.log(
      `${fmt(USERS)} users in SQLite (WAL, synchronous=NORMAL) through SqliteStore; pages of ${PAGE_SIZE}; single-page figures are the median of ${REPEATS} runs; resident size at the end ${fmt(rss)} MiB\n`,
    );
    console.log(formatTable(['what', 'cost', 'notes'], rows));
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(`records scale benchmark failed: ${String(err)}`);
});
