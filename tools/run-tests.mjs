// Runs the compiled test files (dist/test/**/*.test.js) with node's test runner and ends with one
// summary (tests, suites, pass, fail, …) as a single `node --test` prints it.
//
//   node tools/run-tests.mjs [--quick] [substring …]
//
// SLOTS files run at a time (the machine's cores), each in its own process, the heavier first
// (HEAVIER_FIRST). The files in SERIAL, which assert on wall-clock time, CPU or memory, or on
// behaviour under load, run one at a time, never two of them at once: one slot takes them in turn
// from the start while the others run the rest. (One slot more once they have ended measured
// slower: the cores are busy all along.) Each file's results are printed together.
// Unit files (isUnit) without hooks of their own at the top level run GROUPED a few to a process:
// node's start and rvm's modules are then paid once per group, not once per file.
// --quick runs the unit files alone: the language, the runtime and the plugins, without SERIAL's
// timing and without a server of any kind.
// Substrings keep the files whose path contains one of them.
//
// Files that need PostgreSQL share one server the run starts (test/support/postgres-server.ts).
//
// Then the run checks that its tests left nothing behind: every file runs with TMPDIR (so
// os.tmpdir()) set to a folder of the run's own, which must be empty at the end, and no process
// the run started may still be running. Either leftover is a failing test in the summary. A whole
// run (no --quick, no substring) also lints and format-checks the source (LINT, biome.jsonc),
// beside the tests, and reports it the same way: the summary stays the last thing printed.
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { finished } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { startRunPostgres } from '../dist/test/support/postgres-server.js';

/** The timing-sensitive files, by source path: never two at once. */
const SERIAL = [
  'test/integration/admission.test.ts', // queued requests answered within a time window
  'test/integration/argon2-concurrency.test.ts', // event-loop delay while hashing
  'test/integration/cpu-budget.test.ts',
  'test/integration/flood.test.ts', // memory under floods
  'test/integration/records-faults.test.ts', // answers within the query or connect timeout
  'test/integration/records-http-faults.test.ts',
  'test/integration/redis-outage.test.ts', // under load
  'test/integration/result-memory.test.ts',
  'test/integration/sqlite-stall.test.ts',
  'test/integration/upload-memory.test.ts',
  'test/integration/worker-killed.test.ts', // under load
  'test/stdlib/auth-whatsapp.test.ts', // timeouts measured to a few ms
  'test/stdlib/records-postgres-hung.test.ts',
  'test/stdlib/validation-hostile.test.ts', // regular expressions within a time bound
  'test/stdlib/validation-pattern.test.ts',
  'test/stdlib/validation-regex-app.test.ts',
  'test/vm/interp/interpreter-budget.test.ts', // CPU budget
  'test/vm/runtime/http/server.test.ts', // answers within 250 ms
  'test/vm/runtime/stores/ipc.test.ts', // answers within a time bound
];

/** The folders of the unit files (--quick); the others run the spec's cases three ways, the CLI, whole servers or outside programs. */
const UNIT_FOLDERS = ['test/vm/', 'test/stdlib/', 'test/plugins/'];
/** The test support that starts a server (PostgreSQL, Redis, rvm processes, fake providers): a file importing one is not a unit file. */
const SERVER_SUPPORT = ['postgres', 'redis', 'redis-server', 'rvm-cluster', 'fake-oauth', 'fake-whatsapp'].map((name) => `/support/${name}.js'`);

/**
 * The folders whose files take longest, heaviest first: they start first, so that the run does not
 * end waiting on one long file started last (the conformance cases run three ways each; Chromium;
 * npm pack; whole servers).
 */
const HEAVIER_FIRST = ['test/spec/', 'test/reference/', 'test/outside/', 'test/integration/', 'test/examples/', 'test/tools/'];

/** Biome's check of the whole source: lint rules and formatting (`npx biome format --write .` formats). */
const LINT = ['node_modules/.bin/biome', ['check', '--error-on-warnings', '--colors=off', '.']];

/** How many unit files share one process (grouped, see groupUnits). */
const GROUPED = 8;

/** How many of the slowest files the end of a run names. */
const SLOWEST_SHOWN = 5;

/** How many files run at once (RVM_TEST_CONCURRENCY sets it). */
const SLOTS = Number(process.env.RVM_TEST_CONCURRENCY) || Math.max(2, availableParallelism());

/** The summary lines node's runner ends a run with, in its order. */
const SUMMARY_KEYS = ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo', 'duration_ms'];

function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...collect(path));
    else if (name.endsWith('.test.js')) out.push(path);
  }
  return out;
}

const sourceOf = (compiled) =>
  compiled
    .replace(/^dist[\\/]/, '')
    .replace(/\.js$/, '.ts')
    .replaceAll('\\', '/');

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const filters = args.filter((a) => a !== '--quick');

const stale = SERIAL.filter((path) => !existsSync(path));
if (stale.length > 0) {
  console.error(`tools/run-tests.mjs lists in SERIAL files that no longer exist: ${stale.join(', ')}`);
  process.exit(1);
}

// Only tests whose source still exists: a test deleted or renamed leaves its compiled file in
// dist, which would otherwise run here (and not in a fresh clone).
const files = collect('dist/test')
  .filter((f) => existsSync(sourceOf(f)))
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .filter((f) => !quick || isUnit(f))
  .sort();
// With no file, node's runner would look for tests everywhere on its own.
if (files.length === 0) {
  console.error(`no test file matches ${filters.map((s) => `'${s}'`).join(' or ') || 'dist/test/**/*.test.js'}`);
  process.exit(1);
}
const isSerial = (f) => SERIAL.includes(sourceOf(f));
/** Where a file stands in HEAVIER_FIRST (the folders not listed last). */
const weightRank = (f) => {
  const rank = HEAVIER_FIRST.findIndex((folder) => sourceOf(f).startsWith(folder));
  return rank === -1 ? HEAVIER_FIRST.length : rank;
};
const heavierFirst = (list) => [...list].sort((a, b) => weightRank(a) - weightRank(b) || a.localeCompare(b));
const fileCount = files.length;
/** The groups of unit files (groupUnits) by entry file: the files each runs in one process. */
const groups = new Map();
// Outside the run's TMPDIR, which must end empty: the entry files of the groups.
const groupDir = mkdtempSync(join(tmpdir(), 'rvm-test-groups-'));
const queues = {
  serial: quick ? [] : heavierFirst(files.filter(isSerial)),
  other: groupUnits(heavierFirst(files.filter((f) => !isSerial(f)))),
};
/** How many processes the run starts for its files: one per queued file or group. */
const processCount = queues.serial.length + queues.other.length;
/** Whether a SERIAL file is running. */
let serialRunning = false;
/** Each file's wall time, as it ended: the slowest are named at the end of the run. */
const fileTimes = [];

const started = performance.now();
const runTmp = mkdtempSync(join(tmpdir(), 'rvm-test-run-'));
// Open to every user as /tmp is: the throwaway PostgreSQL runs as the postgres user in a folder here.
chmodSync(runTmp, 0o1777);
// The test processes inherit the environment: their temp files land in runTmp, and the variable
// marks every process they start, even one that outlives its parent.
process.env.TMPDIR = runTmp;

// One PostgreSQL for the whole run, when a file needs one (test/support/postgres.ts): each file
// gets a database of its own there, and the files that stop their server copy its initdb.
const postgres = files.some(usesPostgres) ? await startRunPostgres() : null;
if (postgres) Object.assign(process.env, postgres.env);
// Stopped, the run still ends through `exit`, where the server's own hook destroys it.
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(130));

const reporter = new spec();
reporter.pipe(process.stdout);
const totals = Object.fromEntries(SUMMARY_KEYS.map((key) => [key, 0]));
const linted = quick || filters.length > 0 ? null : lint();
await Promise.all(Array.from({ length: SLOTS }, runSlot));

postgres?.destroy();
const leftProcesses = await processesLeftBy(runTmp);
// Killed, so that they do not hold ports or files into the next run.
for (const p of leftProcesses) {
  try {
    process.kill(p.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
if (linted) check('the source passes biome (npm run lint)', await linted, 'biome check (npx biome format --write . lays the source out):');
check(
  'no process left running by the tests',
  leftProcesses.map((p) => `${p.pid} ${p.command}`),
);
check(`nothing left in the temp folder (TMPDIR=${runTmp})`, readdirSync(runTmp));
rmSync(runTmp, { recursive: true, force: true });
rmSync(groupDir, { recursive: true, force: true });

totals.duration_ms = performance.now() - started;
// The wall time in words just before node's summary, which stays the last thing printed.
// RVM_TEST_TIMES=FILE keeps when each file started, how long it took and how long its process
// stayed after its last result, in seconds, to tune the lanes.
if (process.env.RVM_TEST_TIMES) {
  const rows = fileTimes.map((t) => [t.start, t.ms, t.lingered].map((ms) => (ms / 1000).toFixed(1)).join('\t') + `\t${t.file}\n`);
  writeFileSync(process.env.RVM_TEST_TIMES, rows.join(''));
}
const slowest = fileTimes.sort((a, b) => b.ms - a.ms).slice(0, SLOWEST_SHOWN);
const lines = [
  `slowest files: ${slowest.map((t) => `${t.file} ${seconds(t.ms)}`).join(', ')}`,
  `total wall time ${seconds(totals.duration_ms)}: ${fileCount} files in ${processCount} processes, ${SLOTS} at a time`,
  ...SUMMARY_KEYS.map((key) => `${key} ${totals[key]}`),
];
for (const message of lines) reporter.write({ type: 'test:diagnostic', data: { nesting: 0, message } });
reporter.end();
await finished(reporter);
process.exit(totals.fail + totals.cancelled > 0 ? 1 : 0);

/** One slot: runs the next SERIAL file when none is running, else the next other file, until none is left. */
async function runSlot() {
  for (;;) {
    const serial = !serialRunning && queues.serial.length > 0;
    const file = serial ? queues.serial.shift() : queues.other.shift();
    if (file === undefined) return;
    if (serial) serialRunning = true;
    await runFile(file);
    if (serial) serialRunning = false;
  }
}

/**
 * Runs one file (or a group's entry) in its own process and hands its events to the reporter
 * together, once it has ended (files running at once would interleave); adds its summary lines to
 * the totals.
 */
async function runFile(file) {
  const fileStarted = performance.now();
  const events = [];
  let lastResult = fileStarted;
  for await (const event of run({ files: [file] })) {
    const summary = summaryLine(event);
    if (summary) totals[summary.key] += summary.value;
    else events.push(event);
    if (event.type === 'test:pass' || event.type === 'test:fail') lastResult = performance.now();
  }
  for (const event of events) reporter.write(event);
  const grouped = groups.get(file)?.files;
  const name = grouped ? `${grouped.length} unit files from ${sourceOf(grouped[0])}` : sourceOf(file);
  // After its last result, a process still open (a server waiting on a connection, a timer) only costs time.
  fileTimes.push({ file: name, ms: performance.now() - fileStarted, start: fileStarted - started, lingered: performance.now() - lastResult });
}

/**
 * Replaces the groupable unit files of `list` by groups of up to GROUPED, each run in one process
 * through an entry file that imports them in turn (node's runner then runs their tests one
 * after the other, as in a file of its own). A file with top-level hooks (before, after…) stays
 * alone: its hooks would run around the other files' tests too.
 */
function groupUnits(list) {
  const groupable = list.filter((f) => isUnit(f) && !/^(before|after|beforeEach|afterEach)\(/m.test(readFileSync(f, 'utf8')));
  const out = list.filter((f) => !groupable.includes(f));
  for (let i = 0; i < groupable.length; i += GROUPED) {
    const members = groupable.slice(i, i + GROUPED);
    if (members.length === 1) {
      out.push(members[0]);
      continue;
    }
    const entry = join(groupDir, `group-${groups.size + 1}.test.mjs`);
    writeFileSync(entry, members.map((f) => `import ${JSON.stringify(pathToFileURL(f).href)};\n`).join(''));
    groups.set(entry, { files: members });
    out.push(entry);
  }
  return out;
}

/** Whether compiled test file `file` imports the PostgreSQL support. */
function usesPostgres(file) {
  return readFileSync(file, 'utf8').includes("/support/postgres.js'");
}

/** Whether compiled test file `file` is a unit file: in UNIT_FOLDERS, not in SERIAL, starting no server. */
function isUnit(file) {
  if (!UNIT_FOLDERS.some((folder) => sourceOf(file).startsWith(folder)) || SERIAL.includes(sourceOf(file))) return false;
  const code = readFileSync(file, 'utf8');
  return !SERVER_SUPPORT.some((module) => code.includes(module));
}

/** Runs LINT; resolves to its complaints as lines (none when it passes). */
function lint() {
  return new Promise((resolve) => {
    execFile(LINT[0], LINT[1], { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve(error ? `${stdout}${stderr}${stdout || stderr ? '' : error.message}`.trimEnd().split('\n') : []);
    });
  });
}

/** One of the summary lines a run ends with, or undefined for any other event. */
function summaryLine(event) {
  if (event.type !== 'test:diagnostic' || event.data.nesting !== 0 || event.data.file !== undefined) return undefined;
  const [key, value] = event.data.message.split(' ');
  return SUMMARY_KEYS.includes(key) ? { key, value: Number(value) } : undefined;
}

/** Reports a run-level check as a top-level test, failing with the problems it names (introduced by `heading`). */
function check(name, problems, heading = 'left behind:') {
  const failed = problems.length > 0;
  const data = { name, nesting: 0, testNumber: totals.tests + 1, details: { duration_ms: 0 } };
  if (failed) {
    const message = `${heading}\n${problems.map((l) => `  ${l}`).join('\n')}`;
    data.details.error = Object.assign(new Error(message), { stack: message });
  }
  reporter.write({ type: failed ? 'test:fail' : 'test:pass', data });
  totals.tests += 1;
  totals[failed ? 'fail' : 'pass'] += 1;
}

/**
 * The processes still running that the run started: those whose parent chain leads here, and
 * those whose environment carries the run's TMPDIR (a server whose test process has ended is
 * handed to init, but keeps the environment it started with). A process ending as the last
 * test closes gets a moment to go.
 */
async function processesLeftBy(runTmp) {
  for (let attempt = 1; ; attempt++) {
    const processes = runningProcesses();
    const descendsFromHere = (p) => {
      for (let ppid = p.ppid; ppid > 1; ppid = processes.get(ppid)?.ppid ?? 0) if (ppid === process.pid) return true;
      return false;
    };
    const left = [...processes.values()].filter((p) => p.pid !== process.pid && (descendsFromHere(p) || p.environ.includes(`TMPDIR=${runTmp}`)));
    if (left.length === 0 || attempt === 20) return left;
    await sleep(100);
  }
}

/** The processes of this machine by pid (Linux's /proc), zombies aside: parent, command and environment. */
function runningProcesses() {
  const processes = new Map();
  if (!existsSync('/proc/self/stat')) return processes;
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    const read = (file) => {
      try {
        return readFileSync(`/proc/${name}/${file}`, 'utf8');
      } catch {
        return ''; // ended while being read, or another user's
      }
    };
    const stat = read('stat');
    // pid (comm) state ppid …; comm may hold spaces and parentheses.
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (!stat || state === 'Z') continue;
    processes.set(Number(name), {
      pid: Number(name),
      ppid: Number(ppid),
      command: read('cmdline').replaceAll('\0', ' ').trim().slice(0, 200),
      environ: read('environ').split('\0'),
    });
  }
  return processes;
}

function seconds(ms) {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}
