/**
 * The reliability benchmark (spec/language.md §7.3): attacks on the isolation limits run one after the
 * other against `rvm run --prod` (bench/apps/reliability), while a probe client from another
 * address requests GET /hello every 10 ms and the server's RSS is sampled every 50 ms. Per attack
 * it reports the probe's p50/p99 and failures, the server's peak RSS and whether the process
 * survived, against the targets: probe p99 under 250 ms, alive, peak RSS under 1 GiB; for the
 * connection flood, every probe request served.
 *
 * One script, three roles: run without arguments it is the conductor (starts the server, runs the
 * attacks, prints the table); `monitor` is the probe and RSS sampler, a child of its own so the
 * attack traffic this process generates does not delay the probe's timers; `flood` holds a share
 * of the connection flood's sockets, as one process cannot hold 20,000 under `ulimit -n` 20,000.
 *
 * The SQLite query stall seeds its table before the probe starts (`prepare`), once:
 * the rows stay in bench/apps/reliability/.rvm/ for the next run.
 *
 * Env: BENCH_ATTACK_S (seconds per attack, default 15; the flood takes 5 s more to open its
 * sockets). Always exits 0 and kills everything it started: it measures, it does not test.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import http from 'node:http';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { REPO_ROOT, fmt, freePort, machineDescription, waitForServer } from './util.js';

/** The probe asks this often: fine enough to see a 10 ms time slice, cheap for the server. */
const PROBE_INTERVAL_MS = 10;
/** A probe request unanswered this long is a failure, counted as this many ms. */
const PROBE_TIMEOUT_MS = 5000;
/**
 * Keep-alive connections the probe may open. It sends on schedule whatever came back, and a
 * connection carries one request at a time, so 100 requests/s at a latency L need 100 × L
 * connections: a pool of 4 queued the probe itself as soon as answers took 40 ms, and reported
 * its own queue. 64 lasts to 640 ms, well past the target; a healthy server uses one.
 */
const PROBE_SOCKETS = 64;
/** The probe's source address: another client than the attacker's 127.0.0.1 (Linux routes all of 127/8 to loopback). */
const PROBE_ADDRESS = '127.0.0.2';
/** How often the server's VmRSS is read. */
const RSS_INTERVAL_MS = 50;
/** Seconds of each attack: long enough for memory to pile up and for several time slices to pass. */
const ATTACK_MS = positiveEnv('BENCH_ATTACK_S', 15) * 1000;
/** The flood gets this much longer: opening 20,000 sockets itself takes seconds. */
const FLOOD_EXTRA_MS = 5000;
/** The baseline's length: the probe alone. */
const BASELINE_MS = 5000;
/** After an attack the server has settled when one window of probing is all answered and fast. */
const SETTLE_WINDOW_MS = 1000;
/** "Fast" when settling: an idle server answers GET /hello in about a millisecond. */
const SETTLE_FAST_MS = 50;
/** A server not settled after this long is hung: it is killed, restarted and the attack fails. */
const SETTLE_MAX_MS = 60_000;
/** How long the server may take to start answering. */
const START_TIMEOUT_MS = 30_000;
/** How long the server may take to shut down on SIGTERM before it is killed. */
const STOP_GRACE_MS = 2000;
/** Kept from the server's stderr to say why it died. */
const STDERR_KEEP_CHARS = 4000;

/** The targets (bench/README.md, Reliability). */
const TARGET_P99_MS = 250;
const TARGET_RSS_KB = 1024 * 1024;

/** An attacking worker pauses this long after an answer: keeps the load generator's CPU modest. */
const ATTACK_PAUSE_MS = 10;
/** ... and this long after a connection error, so a dead server is not hammered in a busy loop. */
const ATTACK_ERROR_PAUSE_MS = 100;
/** The body attack's workers pause longer: 300 MiB in flight is the attack, not the rate. */
const BODY_PAUSE_MS = 200;

/** `a` repeated before the `!` of the regex bomb: 22 s of backtracking per request before the linear-time patterns. */
const REGEX_A_COUNT = 32;
const REGEX_PARALLEL = 4;
/** The natives loop's text body: `a\n` lines, so each `replace` splits the whole text into 358,400 parts. */
const NATIVES_BODY_BYTES = 700 * 1024;
const NATIVES_PARALLEL = 4;
const SPIN_PARALLEL = 10;
/** The heap attack: 300 bodies of 1 MiB in parallel, each ~349,000 empty objects (21 MB of heap each before the body memory budget). */
const BODY_PARALLEL = 300;
const BODY_EMPTY_OBJECTS = 349_000;
/** The large-results attack: 40 listings at once of 1,000 rows of 100 KB (bench/apps/reliability/large-results.rvm). */
const LARGE_RESULTS_PARALLEL = 40;
const LARGE_RESULTS_ROWS = 1000;
const LARGE_RESULTS_ROW_CHARS = 100 * 1024;
/** Rows stored per seeding request (the route's @max): 100 requests of one 100 KB body each. */
const LARGE_RESULTS_SEED_BATCH = 10;
/** The connection flood: sockets from 127.0.0.1, split over child processes. */
const FLOOD_CONNECTIONS = 20_000;
/** Sockets per flood process: well under `ulimit -n` (20,000 here) with room for node's own fds. */
const FLOOD_PER_PROCESS = 5000;
/** Connects in progress at once per flood process: as fast as loopback allows without a SYN storm. */
const FLOOD_PENDING = 256;
/** A flood socket the server closed is reopened after this pause, so the flood is held, not a reconnect storm. */
const FLOOD_RECONNECT_PAUSE_MS = 1000;

/**
 * The SQLite query stall: rows of bench/apps/reliability/stall.rvm's StallItem, and
 * the clients looping its routes, half a deep-offset sort of them all, half a `contains` scan.
 * The offset is the route's (399,900: the last page).
 */
const STALL_ROWS = 400_000;
const STALL_PARALLEL = 4;
/** Where the app keeps its records. */
const STALL_DATABASE = join(REPO_ROOT, 'bench/apps/reliability/.rvm/data.sqlite');

const SELF = fileURLToPath(import.meta.url);

function positiveEnv(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// Monitor: the probe and the RSS sampler.

/** What the conductor tells the monitor. */
type MonitorCommand = { type: 'start'; url: string; pid: number; fresh: boolean } | { type: 'stop' };

/** What the monitor measured between a start and a stop. */
interface ProbeResult {
  /** Per probe request, ms from its send to its answer; an unanswered request counts PROBE_TIMEOUT_MS. */
  latencies: number[];
  /** Requests not answered 200 within PROBE_TIMEOUT_MS. */
  failures: number;
  /** Why they failed: `timeout`, an error code or `status 503`, with counts. */
  reasons: Record<string, number>;
  /** Highest VmRSS seen, in kB; null when the process could not be read at all. */
  peakRssKb: number | null;
}

function runMonitor(): void {
  let session: { stop(): Promise<ProbeResult> } | null = null;
  process.on('message', (command: MonitorCommand) => {
    if (command.type === 'start') {
      session = startSession(command.url, command.pid, command.fresh);
    } else if (session) {
      const current = session;
      session = null;
      void current.stop().then((result) => process.send!(result));
    }
  });
  process.on('disconnect', () => process.exit(0));
}

/**
 * Probes `url` every PROBE_INTERVAL_MS whether or not earlier requests were answered (so a stall
 * shows in every request it delays) and samples `pid`'s RSS. `fresh` opens a new connection per
 * request, which is what a connection flood denies; otherwise a small keep-alive pool is reused.
 */
function startSession(url: string, pid: number, fresh: boolean): { stop(): Promise<ProbeResult> } {
  const agent = new http.Agent({ keepAlive: !fresh, maxSockets: fresh ? Infinity : PROBE_SOCKETS });
  const latencies: number[] = [];
  const reasons: Record<string, number> = {};
  let failures = 0;
  const pending = new Set<Promise<void>>();
  let peakRssKb: number | null = null;
  let running = true;

  const fail = (reason: string, ms: number) => {
    failures++;
    reasons[reason] = (reasons[reason] ?? 0) + 1;
    latencies.push(ms);
  };
  const probeOnce = () =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      let done = false;
      const finish = (outcome: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        outcome();
        resolve();
      };
      const req = http.get(url, { agent, localAddress: PROBE_ADDRESS }, (res) => {
        res.resume();
        res.on('end', () =>
          finish(() => (res.statusCode === 200 ? latencies.push(performance.now() - started) : fail(`status ${res.statusCode}`, performance.now() - started))),
        );
        res.on('error', (err: NodeJS.ErrnoException) => finish(() => fail(err.code ?? err.message, PROBE_TIMEOUT_MS)));
      });
      req.on('error', (err: NodeJS.ErrnoException) => finish(() => fail(err.code ?? err.message, PROBE_TIMEOUT_MS)));
      const timer = setTimeout(() => {
        finish(() => fail('timeout', PROBE_TIMEOUT_MS));
        req.destroy();
      }, PROBE_TIMEOUT_MS);
    });

  const origin = performance.now();
  let sent = 0;
  const tick = () => {
    if (!running) return;
    const p = probeOnce();
    pending.add(p);
    void p.then(() => pending.delete(p));
    sent++;
    // Scheduled from the start, not from the last tick, so timer lateness does not thin the probe.
    setTimeout(tick, Math.max(0, origin + sent * PROBE_INTERVAL_MS - performance.now()));
  };
  tick();

  const sampleRss = () => {
    const kb = readRssKb(pid);
    if (kb !== null && (peakRssKb === null || kb > peakRssKb)) peakRssKb = kb;
  };
  sampleRss();
  const rssTimer = setInterval(sampleRss, RSS_INTERVAL_MS);

  return {
    async stop() {
      running = false;
      clearInterval(rssTimer);
      sampleRss();
      await Promise.all(pending);
      agent.destroy();
      return { latencies, failures, reasons, peakRssKb };
    },
  };
}

/** VmRSS of a process in kB, from /proc; null once the process is gone. */
function readRssKb(pid: number): number | null {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Flood: one process's share of the connection flood.

/** What a flood process reports to the conductor, every 250 ms and when told to stop. */
interface FloodReport {
  open: number;
  peakOpen: number;
  opened: number;
  closedByServer: number;
  errors: Record<string, number>;
}

/**
 * Opens `count` idle connections to `port` on 127.0.0.1 (from 127.0.0.1, the kernel's choice),
 * at most FLOOD_PENDING connecting at once, and reopens any the server closes, until disconnected.
 */
function runFlood(port: number, count: number): void {
  const report: FloodReport = { open: 0, peakOpen: 0, opened: 0, closedByServer: 0, errors: {} };
  const sockets = new Set<net.Socket>();
  let pending = 0;
  let wanted = count;
  let stopping = false;

  const pump = () => {
    while (!stopping && wanted > 0 && pending < FLOOD_PENDING) {
      wanted--;
      pending++;
      const socket = net.connect({ port, host: '127.0.0.1' });
      sockets.add(socket);
      let connected = false;
      socket.on('connect', () => {
        connected = true;
        pending--;
        report.opened++;
        report.open++;
        report.peakOpen = Math.max(report.peakOpen, report.open);
        pump();
      });
      socket.on('error', (err: NodeJS.ErrnoException) => {
        const code = err.code ?? err.message;
        report.errors[code] = (report.errors[code] ?? 0) + 1;
      });
      socket.on('close', () => {
        sockets.delete(socket);
        if (connected) {
          report.open--;
          if (!stopping) report.closedByServer++;
        } else {
          pending--;
        }
        if (stopping) return;
        setTimeout(() => {
          wanted++;
          pump();
        }, FLOOD_RECONNECT_PAUSE_MS);
        pump();
      });
    }
  };
  pump();
  // The conductor may disconnect between a tick and its send: a report then has no one to read it.
  const timer = setInterval(() => process.connected && process.send!(report, undefined, undefined, () => {}), 250);
  process.on('disconnect', () => {
    stopping = true;
    clearInterval(timer);
    for (const socket of sockets) socket.destroy();
    process.exit(0);
  });
}

// ---------------------------------------------------------------------------------------------
// Conductor: the server, the attacks and the report.

interface Server {
  child: ChildProcess;
  base: string;
  port: number;
  stderr: () => string;
}

/** Every process this script started, so each is killed however the script ends. */
const started = new Set<ChildProcess>();

function track(child: ChildProcess): ChildProcess {
  started.add(child);
  child.once('exit', () => started.delete(child));
  return child;
}

function killAll(): void {
  for (const child of started) child.kill('SIGKILL');
}

/** Starts `rvm run --prod` on the reliability app and waits until it answers; stdout is discarded as in production. */
async function startServer(): Promise<Server> {
  const port = await freePort();
  const child = track(
    spawn(
      process.execPath,
      [join(REPO_ROOT, 'dist/tools/cli.js'), 'run', join(REPO_ROOT, 'bench/apps/reliability'), '--prod', '--port', String(port), '--host', '127.0.0.1'],
      {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, NODE_ENV: 'production' },
      },
    ),
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEEP_CHARS);
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitForServer(`${base}/hello`, START_TIMEOUT_MS, () => isAlive(child));
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${stderr.trim()}`);
  }
  return { child, base, port, stderr: () => stderr };
}

function isAlive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

function stopServer(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (!isAlive(child)) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS).unref();
  });
}

/** How the process ended, for the report: the exit code or signal and the last stderr line that says why. */
function deathNote(server: Server): string {
  const how = server.child.signalCode ? `killed by ${server.child.signalCode}` : `exit code ${server.child.exitCode}`;
  const lines = server
    .stderr()
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const why = lines.filter((l) => /out of memory|fatal|error/i.test(l)).pop() ?? lines.pop() ?? '';
  return why ? `${how}: ${why.slice(0, 160)}` : how;
}

class Monitor {
  private readonly child = track(fork(SELF, ['monitor'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));

  start(server: Server, fresh = false): void {
    this.child.send({ type: 'start', url: `${server.base}/hello`, pid: server.child.pid!, fresh } satisfies MonitorCommand);
  }

  stop(): Promise<ProbeResult> {
    return new Promise((resolve) => {
      this.child.once('message', (result: ProbeResult) => resolve(result));
      this.child.send({ type: 'stop' } satisfies MonitorCommand);
    });
  }

  close(): void {
    this.child.disconnect();
  }
}

/** What an attack's own requests got back: counts by status or error code. */
type Answers = Record<string, number>;

/** What the flood achieved, for the notes. */
interface AttackOutcome {
  answers: Answers;
  note?: string;
}

interface Attack {
  name: string;
  /** Runs until `deadline` (performance.now()), then drops its connections. */
  run(server: Server, deadline: number): Promise<AttackOutcome>;
  /** Sets the attack's data up before the probe starts (seeding a table), unmeasured. */
  prepare?(server: Server): Promise<void> | void;
  /** The probe opens a new connection per request (the flood), not a keep-alive pool. */
  freshProbe?: boolean;
  /** Judged on "probe served" (no failed probe request) instead of the p99. */
  servedTarget?: boolean;
  durationMs: number;
}

interface AttackRequest {
  method: 'GET' | 'POST';
  path: string;
  contentType?: string;
  body?: Buffer;
}

/**
 * `parallel` workers from 127.0.0.1, each sending `request` and, once answered, again after
 * `pause` ms, until the deadline; then every connection is destroyed, whatever it was doing.
 */
async function hammer(server: Server, request: AttackRequest, parallel: number, pause: number, deadline: number): Promise<AttackOutcome> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: parallel });
  const answers: Answers = {};
  let stopped = false;
  // What the deadline itself cuts off (socket hang-ups of the destroyed requests) is not an answer.
  const count = (key: string) => {
    if (!stopped) answers[key] = (answers[key] ?? 0) + 1;
  };
  const inFlight = new Set<http.ClientRequest>();
  const once = () =>
    new Promise<boolean>((resolve) => {
      const headers: http.OutgoingHttpHeaders = request.body ? { 'content-type': request.contentType, 'content-length': request.body.length } : {};
      const req = http.request({ host: '127.0.0.1', port: server.port, method: request.method, path: request.path, headers, agent }, (res) => {
        res.resume();
        res.on('end', () => {
          count(String(res.statusCode));
          resolve(true);
        });
        res.on('error', () => resolve(false));
      });
      inFlight.add(req);
      req.on('close', () => inFlight.delete(req));
      req.on('error', (err: NodeJS.ErrnoException) => {
        count(err.code ?? 'error');
        resolve(false);
      });
      req.end(request.body);
    });
  const worker = async () => {
    while (performance.now() < deadline) {
      const answered = await Promise.race([once(), sleep(Math.max(0, deadline - performance.now())).then(() => null)]);
      if (answered === null) break;
      await sleep(answered ? pause : ATTACK_ERROR_PAUSE_MS);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  stopped = true;
  for (const req of inFlight) req.destroy();
  agent.destroy();
  return { answers };
}

function regexBody(): Buffer {
  return Buffer.from(JSON.stringify({ v: `${'a'.repeat(REGEX_A_COUNT)}!` }));
}

function nativesBody(): Buffer {
  return Buffer.from('a\n'.repeat(NATIVES_BODY_BYTES / 2));
}

/** A body that passes the route's validation, so its request waits for Argon2 holding the parsed objects. */
function heapBody(): Buffer {
  const objects = Array.from({ length: BODY_EMPTY_OBJECTS }, () => '{}').join(',');
  return Buffer.from(`{"email":"attacker@example.com","password":"password123","a":[${objects}]}`);
}

/** Tops the large-results table up to LARGE_RESULTS_ROWS rows (the SQLite file stays between runs). */
async function seedLargeResults(server: Server): Promise<void> {
  const counted = (await (await fetch(`${server.base}/large-results/count`)).json()) as { n: number };
  const body = JSON.stringify({ body: 'r'.repeat(LARGE_RESULTS_ROW_CHARS), n: LARGE_RESULTS_SEED_BATCH });
  for (let n = counted.n; n < LARGE_RESULTS_ROWS; n += LARGE_RESULTS_SEED_BATCH) {
    const res = await fetch(`${server.base}/large-results/seed`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    if (res.status !== 201) throw new Error(`seeding large results: ${res.status} ${await res.text()}`);
  }
}

/** Seeds (inside the attack's time: a few seconds of 100 KB writes), then LARGE_RESULTS_PARALLEL clients list every row at once. */
async function largeResults(server: Server, deadline: number): Promise<AttackOutcome> {
  await seedLargeResults(server);
  return hammer(server, { method: 'GET', path: '/large-results' }, LARGE_RESULTS_PARALLEL, ATTACK_PAUSE_MS, deadline);
}

/** Holds FLOOD_CONNECTIONS sockets from 127.0.0.1 in flood processes until the deadline. */
async function flood(server: Server, deadline: number): Promise<AttackOutcome> {
  const processes = Math.ceil(FLOOD_CONNECTIONS / FLOOD_PER_PROCESS);
  const reports = new Map<ChildProcess, FloodReport>();
  const children = Array.from({ length: processes }, (_, i) => {
    const share = Math.min(FLOOD_PER_PROCESS, FLOOD_CONNECTIONS - i * FLOOD_PER_PROCESS);
    const child = track(fork(SELF, ['flood', String(server.port), String(share)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    child.on('message', (report: FloodReport) => reports.set(child, report));
    return child;
  });
  let peakHeld = 0;
  let reachedAt: number | null = null;
  const begun = performance.now();
  while (performance.now() < deadline) {
    await sleep(250);
    const held = [...reports.values()].reduce((n, r) => n + r.open, 0);
    peakHeld = Math.max(peakHeld, held);
    if (reachedAt === null && held >= FLOOD_CONNECTIONS) reachedAt = performance.now() - begun;
  }
  const exits = children.map((child) => new Promise<void>((resolve) => (isAlive(child) ? child.once('exit', () => resolve()) : resolve())));
  for (const child of children) if (child.connected) child.disconnect();
  await Promise.race([Promise.all(exits), sleep(STOP_GRACE_MS)]);
  for (const child of children) child.kill('SIGKILL');
  const all = [...reports.values()];
  const errors: Answers = {};
  for (const r of all) for (const [code, n] of Object.entries(r.errors)) errors[code] = (errors[code] ?? 0) + n;
  const opened = all.reduce((n, r) => n + r.opened, 0);
  const closed = all.reduce((n, r) => n + r.closedByServer, 0);
  const reached = reachedAt === null ? `never all ${fmt(FLOOD_CONNECTIONS)}` : `all ${fmt(FLOOD_CONNECTIONS)} after ${(reachedAt / 1000).toFixed(1)} s`;
  return {
    answers: errors,
    note: `peak ${fmt(peakHeld)} sockets held at once (${reached}); ${fmt(opened)} connects succeeded, ${fmt(closed)} closed by the server`,
  };
}

/**
 * STALL_ROWS items in the running server's file (its table made by the server at start), unless a
 * previous run left them (.rvm/ is kept): one transaction, one prepared insert, from this process.
 */
function seedStall(): void {
  const db = new Database(STALL_DATABASE);
  try {
    const { n } = db.prepare('SELECT count(*) AS n FROM "StallItem"').get() as { n: number };
    if (n >= STALL_ROWS) return;
    const insert = db.prepare('INSERT INTO "StallItem" ("id", "title", "body", "created_at", "updated_at") VALUES (?, ?, ?, ?, ?)');
    db.transaction(() => {
      for (let i = n; i < STALL_ROWS; i++) {
        const at = new Date(1_700_000_000_000 + i).toISOString();
        insert.run(`stall-${String(i).padStart(8, '0')}`, `title ${(i * 7919) % STALL_ROWS}`, `the body of item ${i}`, at, at);
      }
    })();
  } finally {
    db.close();
  }
}

/** Half the clients loop the deep sort and half the contains search until the deadline. */
async function sqliteStall(server: Server, deadline: number): Promise<AttackOutcome> {
  const loops = (['/stall/deep', '/stall/search'] as const).map(async (path) => {
    const { answers } = await hammer(server, { method: 'GET', path }, STALL_PARALLEL / 2, ATTACK_PAUSE_MS, deadline);
    return Object.entries(answers).map(([code, n]) => [`${path} ${code}`, n] as const);
  });
  const answers: Answers = Object.fromEntries((await Promise.all(loops)).flat());
  return { answers };
}

const ATTACKS: Attack[] = [
  {
    name: 'baseline (probe only)',
    durationMs: BASELINE_MS,
    run: async (_s, deadline) => {
      await sleep(deadline - performance.now());
      return { answers: {} };
    },
  },
  {
    name: `regex bomb (${REGEX_PARALLEL} × POST /regex)`,
    durationMs: ATTACK_MS,
    run: (s, deadline) =>
      hammer(s, { method: 'POST', path: '/regex', contentType: 'application/json', body: regexBody() }, REGEX_PARALLEL, ATTACK_PAUSE_MS, deadline),
  },
  {
    name: `natives loop (${NATIVES_PARALLEL} × 700 KB POST /natives)`,
    durationMs: ATTACK_MS,
    run: (s, deadline) =>
      hammer(s, { method: 'POST', path: '/natives', contentType: 'text/plain', body: nativesBody() }, NATIVES_PARALLEL, ATTACK_PAUSE_MS, deadline),
  },
  {
    name: `endless loop (${SPIN_PARALLEL} × GET /spin)`,
    durationMs: ATTACK_MS,
    run: (s, deadline) => hammer(s, { method: 'GET', path: '/spin' }, SPIN_PARALLEL, ATTACK_PAUSE_MS, deadline),
  },
  {
    name: `heap (${BODY_PARALLEL} × 1 MiB POST /auth/register)`,
    durationMs: ATTACK_MS,
    run: (s, deadline) =>
      hammer(s, { method: 'POST', path: '/auth/register', contentType: 'application/json', body: heapBody() }, BODY_PARALLEL, BODY_PAUSE_MS, deadline),
  },
  {
    name: `large results (${LARGE_RESULTS_PARALLEL} × GET /large-results, ${fmt(LARGE_RESULTS_ROWS)} rows of 100 KB)`,
    durationMs: ATTACK_MS,
    run: largeResults,
  },
  {
    name: `connection flood (${fmt(FLOOD_CONNECTIONS)} from 127.0.0.1)`,
    durationMs: ATTACK_MS + FLOOD_EXTRA_MS,
    freshProbe: true,
    servedTarget: true,
    run: flood,
  },
  {
    name: `SQLite query stall (${STALL_PARALLEL} × deep-offset sort / contains over ${fmt(STALL_ROWS)} rows)`,
    durationMs: ATTACK_MS,
    prepare: seedStall,
    run: sqliteStall,
  },
];

interface Row {
  attack: Attack;
  probe: ProbeResult;
  alive: boolean;
  /** ms until the probe was fast again; null when the server died or hung. */
  settledMs: number | null;
  outcome: AttackOutcome;
  death?: string;
  clientCpuPct: number;
}

/** Probes in windows until one is all answered and fast; the ms it took, or null (dead or hung). */
async function settle(monitor: Monitor, server: Server): Promise<number | null> {
  const begun = performance.now();
  while (performance.now() - begun < SETTLE_MAX_MS) {
    if (!isAlive(server.child)) return null;
    monitor.start(server);
    await sleep(SETTLE_WINDOW_MS);
    const window = await monitor.stop();
    if (window.failures === 0 && window.latencies.length > 0 && Math.max(...window.latencies) < SETTLE_FAST_MS) return performance.now() - begun;
  }
  return null;
}

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function verdict(row: Row): { pass: boolean; why: string[] } {
  const why: string[] = [];
  if (!row.alive) why.push('died');
  if (row.alive && row.settledMs === null) why.push('hung');
  const p99 = percentile(row.probe.latencies, 99);
  if (row.attack.servedTarget) {
    if (row.probe.failures > 0) why.push('probe not served');
  } else if (!(p99 < TARGET_P99_MS)) why.push(`p99 ≥ ${TARGET_P99_MS} ms`);
  if (row.probe.peakRssKb !== null && row.probe.peakRssKb >= TARGET_RSS_KB) why.push('RSS ≥ 1 GiB');
  return { pass: why.length === 0, why };
}

const ms = (v: number) => (Number.isNaN(v) ? '-' : v >= 100 ? fmt(v) : v.toFixed(1));
const mib = (kb: number | null) => (kb === null ? '-' : `${fmt(kb / 1024)} MiB`);
const counts = (c: Record<string, number>) =>
  Object.entries(c)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ×${fmt(n)}`)
    .join(', ') || 'none';

function report(rows: Row[]): void {
  console.log(`\n### Reliability (reliability.ts)\n`);
  console.log(`${machineDescription()}; client and server share the machine (no pinning): the probe, the attackers and the server compete for the same cores.`);
  console.log(
    `Probe: GET /hello every ${PROBE_INTERVAL_MS} ms from ${PROBE_ADDRESS} (keep-alive pool of ${PROBE_SOCKETS}; a new connection per request during the flood); no answer within ${PROBE_TIMEOUT_MS / 1000} s counts ${PROBE_TIMEOUT_MS} ms and a failure. RSS: /proc VmRSS every ${RSS_INTERVAL_MS} ms. Attacks from 127.0.0.1, ${ATTACK_MS / 1000} s each (flood ${(ATTACK_MS + FLOOD_EXTRA_MS) / 1000} s).\n`,
  );
  console.log('| attack | probe p50 ms | probe p99 ms | probe failures | server peak RSS | server alive | result |');
  console.log('|---|---|---|---|---|---|---|');
  for (const row of rows) {
    const { pass, why } = verdict(row);
    const alive = row.alive ? (row.settledMs === null ? 'yes, hung (restarted)' : 'yes') : 'no (restarted)';
    console.log(
      `| ${row.attack.name} | ${ms(percentile(row.probe.latencies, 50))} | ${ms(percentile(row.probe.latencies, 99))} | ${fmt(row.probe.failures)} / ${fmt(row.probe.latencies.length)} | ${mib(row.probe.peakRssKb)} | ${alive} | ${pass ? 'PASS' : `**FAIL** (${why.join(', ')})`} |`,
    );
  }
  console.log(
    `\nTargets: probe p99 < ${TARGET_P99_MS} ms (connection flood: every probe request answered), server alive and settled within ${SETTLE_MAX_MS / 1000} s, peak RSS < 1 GiB.\n`,
  );
  for (const row of rows) {
    const lines = [
      `attack answers: ${counts(row.outcome.answers)}`,
      row.outcome.note,
      row.probe.failures ? `probe failures: ${counts(row.probe.reasons)}` : undefined,
      row.settledMs === null
        ? row.alive
          ? `not settled within ${SETTLE_MAX_MS / 1000} s`
          : undefined
        : `probe fast again within ${(row.settledMs / 1000).toFixed(1)} s after the attack`,
      row.death ? `server died: ${row.death}` : undefined,
      `load generator CPU ${row.clientCpuPct.toFixed(0)} % of one core`,
    ].filter(Boolean);
    console.log(`- ${row.attack.name}: ${lines.join('; ')}`);
  }
}

async function conduct(): Promise<void> {
  const monitor = new Monitor();
  const rows: Row[] = [];
  let server = await startServer();
  try {
    // Unmeasured: the server's first answers run unoptimised code and would land in the baseline.
    await settle(monitor, server);
    // BENCH_ONLY=heap runs the attacks whose name contains it (the baseline always runs).
    const only = process.env.BENCH_ONLY;
    for (const attack of ATTACKS.filter((a, i) => i === 0 || only === undefined || a.name.includes(only))) {
      console.error(`[reliability] ${attack.name} …`);
      await attack.prepare?.(server);
      const cpuBefore = process.cpuUsage();
      const begun = performance.now();
      monitor.start(server, attack.freshProbe);
      const outcome = await attack.run(server, begun + attack.durationMs);
      const probe = await monitor.stop();
      const cpu = process.cpuUsage(cpuBefore);
      const clientCpuPct = ((cpu.user + cpu.system) / 1000 / (performance.now() - begun)) * 100;
      const settledMs = await settle(monitor, server);
      const alive = isAlive(server.child);
      const row: Row = { attack, probe, alive, settledMs, outcome, clientCpuPct };
      if (!alive) row.death = deathNote(server);
      rows.push(row);
      console.error(
        `[reliability] ${attack.name}: p99 ${ms(percentile(probe.latencies, 99))} ms, ${probe.failures} failures, peak ${mib(probe.peakRssKb)}, ${alive ? 'alive' : 'dead'}${settledMs === null ? ', not settled' : ''}`,
      );
      if (!alive || settledMs === null) {
        await stopServer(server.child);
        server = await startServer();
      }
    }
  } finally {
    await stopServer(server.child);
    monitor.close();
  }
  report(rows);
}

const role = process.argv[2];
if (role === 'monitor') {
  runMonitor();
} else if (role === 'flood') {
  runFlood(Number(process.argv[3]), Number(process.argv[4]));
} else {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      killAll();
      process.exit(130);
    });
  }
  process.on('exit', killAll);
  conduct().catch((err: unknown) => {
    console.error(`reliability benchmark failed: ${err instanceof Error ? err.message : String(err)}`);
    killAll();
  });
}
