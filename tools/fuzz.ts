/**
 * `rvm fuzz`: property-based requests for every route with a `validate {}` or `query {}` block,
 * generated from the validators' arbitraries and sent to the app in process. A valid request
 * must not be refused (422) nor fail (5xx); a request with exactly one field made invalid must
 * be refused (422, or 413 for an upload over its limit). Requests that guards or middleware stop
 * (401, 403, 429, other 4xx) are counted as blocked, not as findings. One seed fixes the run.
 * The app runs from a throwaway copy with its own new database, never the app's data
 * (fuzz-sandbox.ts).
 */
import { randomInt } from 'node:crypto';
import type { Diagnostic } from '../vm/diagnostics.js';
import { formatDiagnostic } from '../vm/diagnostics.js';
import type { RouteTarget } from '../vm/runtime/types.js';
import type { FieldMeta } from '../vm/bytecode/module.js';
import type { PluginRegistry } from '../vm/host/registry.js';
import type { ValueObject } from '../plugins/sdk.js';
import { App } from '../vm/runtime/app.js';
import { buildApp } from './host.js';
import { makeSandbox } from './fuzz-sandbox.js';
import { HTTP } from '../vm/errors.js';
import { inject } from '../vm/runtime/http/inject.js';
import { captureLogger, type CaptureLogger } from '../vm/runtime/log.js';
import { buildRequest, describeRequest, toCurl, toInject, type FuzzRequest } from './fuzz-request.js';
import { deriveSeed, describeMutation, fuzzField, passes, type FieldFuzz, type Mutation, type Sample, type Transport, type Wire } from './fuzz-values.js';

/** Valid and invalid requests per route by default: enough to hit edge values, a few seconds per app. */
export const DEFAULT_RUNS = 100;
/** Most requests of each kind per route: beyond this a run takes minutes and finds nothing new. */
export const MAX_RUNS = 100_000;
/** A request still unanswered after this long is a finding: an app must answer every request. */
const REQUEST_TIMEOUT_MS = 10_000;
/** How often an optional field is left out of a valid request. */
const OMIT_CHANCE = 0.25;
/** How often a field left out of a JSON body is sent as null instead (null also means "not sent"). */
const NULL_CHANCE = 0.5;
/** Characters of a response body kept in a finding. */
const MAX_BODY_CHARS = 500;
/** The value every path parameter gets: safe for ids, names and numbers alike. */
const PATH_PARAM_SAMPLE = '1';

/** What a finding says went wrong. */
export type FindingKind = 'server_error' | 'valid_refused' | 'invalid_accepted' | 'timeout';

/** One problem found, with the first request that showed it (later ones with the same cause are counted). */
export interface FuzzFinding {
  kind: FindingKind;
  /** `POST /api/users`. */
  route: string;
  /** `api/users.rvm:2`. */
  source: string;
  /** The field made invalid, or the fields a valid request was refused for; null when none is to blame. */
  field: string | null;
  /** How the field was broken (`missing`, `wrong type`, `rejected by @email`); null for a valid request. */
  mutation: string | null;
  status: number;
  body: string;
  /** Requests that showed the same finding. */
  count: number;
  request: Record<string, unknown>;
  curl: string;
  /** Error lines the app logged while answering (runtime errors with their location). */
  log: string[];
}

/** What was sent to one route and how it answered. */
export interface RouteSummary {
  route: string;
  source: string;
  valid: { sent: number; accepted: number; blocked: number };
  invalid: { sent: number; refused: number; blocked: number };
  /** Responses by status code. */
  statuses: Record<string, number>;
  /** Fields that could not be fuzzed fully, and why. */
  notes: string[];
}

/** The result of a run. `exitCode` is 1 when there is a finding or the app does not load. */
export interface FuzzReport {
  seed: number;
  runs: number;
  routes: RouteSummary[];
  findings: FuzzFinding[];
  /** Compile errors when the app does not compile. */
  diagnostics: Diagnostic[];
  /** Why the app could not be loaded at all (a plugin that fails to load), else null. */
  error: string | null;
  exitCode: 0 | 1;
}

export interface FuzzOptions {
  /** Valid and invalid requests per route (each); default 100. */
  runs?: number;
  /** Fixes every generated value and choice; default random (printed in the summary). */
  seed?: number;
  /** Receives the report as lines of text while the run goes. */
  log?: (line: string) => void;
  /** Headers sent with every request (an API key a middleware asks for). */
  headers?: Record<string, string>;
  /** The environment the app would run with (default process.env); the copy runs without its database settings. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** A seeded generator of numbers in [0, 1) (mulberry32): the fuzzer's choices. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(items: readonly T[], random: () => number): T {
  return items[Math.floor(random() * items.length)]!;
}

/** Fuzzes every validated route of the app in `dir`. Never throws for a broken app: the report says what is wrong. */
export async function fuzzApp(dir: string, options: FuzzOptions = {}): Promise<FuzzReport> {
  const runs = options.runs ?? DEFAULT_RUNS;
  if (!Number.isSafeInteger(runs) || runs < 1 || runs > MAX_RUNS) throw new RangeError(`runs must be a whole number from 1 to ${MAX_RUNS}, got ${runs}`);
  const seed = options.seed ?? randomInt(2 ** 31);
  if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be a whole number, got ${seed}`);
  const report: FuzzReport = { seed, runs, routes: [], findings: [], diagnostics: [], error: null, exitCode: 0 };

  let sandbox: ReturnType<typeof makeSandbox>;
  try {
    sandbox = makeSandbox(dir, options.env);
  } catch (e) {
    report.error = `no throwaway copy of the app could be made: ${e instanceof Error ? e.message : String(e)}`;
    report.exitCode = 1;
    (options.log ?? (() => {}))(`fuzz: ${report.error}`);
    return report;
  }
  try {
    return await fuzzIn(sandbox.dir, sandbox.env, options, report);
  } finally {
    sandbox.remove();
  }
}

/** Builds the app copy in `dir` with `env` and fuzzes it, filling `report`. */
async function fuzzIn(dir: string, env: Record<string, string | undefined>, options: FuzzOptions, report: FuzzReport): Promise<FuzzReport> {
  const { seed, runs } = report;
  const log = options.log ?? (() => {});
  let build: Awaited<ReturnType<typeof buildApp>>;
  try {
    build = await buildApp(dir, { cache: false, dev: true, settings: { env } });
  } catch (e) {
    report.error = e instanceof Error ? e.message : String(e);
    report.exitCode = 1;
    log(`fuzz: the app could not be loaded: ${report.error}`);
    return report;
  }
  if (build.linked === null) {
    report.diagnostics = build.diagnostics.filter((d) => d.severity === 'error');
    report.exitCode = 1;
    for (const d of report.diagnostics) log(formatDiagnostic(d));
    log(`fuzz: the app does not compile (${report.diagnostics.length} error${report.diagnostics.length === 1 ? '' : 's'}); nothing was sent`);
    return report;
  }

  const logger = captureLogger();
  const app = new App(build.dir, build, logger, { dev: true, cache: false });
  try {
    for (const route of build.linked.routes) {
      if (route.meta.body === null && route.meta.query === null) continue;
      const fuzzer = new RouteFuzzer(app, route, build.registry, seed, runs, options.headers ?? {}, logger);
      report.routes.push(await fuzzer.run(report.findings));
      log(summaryLine(report.routes[report.routes.length - 1]!));
    }
  } finally {
    await app.close();
  }
  for (const f of report.findings) log(findingText(f));
  report.exitCode = report.findings.length > 0 ? 1 : 0;
  const sent = report.routes.reduce((n, r) => n + r.valid.sent + r.invalid.sent, 0);
  log(
    `fuzz: ${report.routes.length} validated route${report.routes.length === 1 ? '' : 's'}, ${sent} requests, ` +
      `${report.findings.length} finding${report.findings.length === 1 ? '' : 's'} (seed ${seed}; reproduce with --runs ${runs} --seed ${seed})`,
  );
  return report;
}

/** One section's fields and how they travel. */
interface Section {
  transport: Transport;
  fields: FieldFuzz[];
}

/** The invalid request kinds of a route, taken in turn. */
interface Target {
  section: 'body' | 'query';
  field: FieldFuzz;
  mutation: Mutation;
  samples: Sample[];
}

/** Sends the valid and invalid requests of one route and records what it answered. */
class RouteFuzzer {
  private readonly name: string;
  private readonly source: string;
  private readonly method: string;
  private readonly path: string;
  private readonly body: Section | null;
  private readonly query: Section | null;
  private readonly random: () => number;
  private readonly summary: RouteSummary;

  constructor(
    private readonly app: App,
    route: RouteTarget,
    registry: PluginRegistry,
    seed: number,
    private readonly runs: number,
    private readonly headers: Record<string, string>,
    private readonly logger: CaptureLogger,
  ) {
    const meta = route.meta;
    this.name = `${meta.method} ${meta.path}`;
    this.source = `${route.file}:${meta.line}`;
    this.method = meta.method === 'ANY' ? (meta.body !== null ? 'POST' : 'GET') : meta.method;
    this.path = '/' + meta.segments.map((s) => (s.kind === 'static' ? s.value : PATH_PARAM_SAMPLE)).join('/');
    const section = (fields: FieldMeta[] | null, transport: Transport, part: string): Section | null =>
      fields === null ? null : { transport, fields: fields.map((f) => fuzzField(f, transport, registry, deriveSeed(seed, this.name, part), runs)) };
    this.body = section(meta.body, meta.body?.some((f) => f.type === 'file') ? 'multipart' : 'json', 'body');
    this.query = section(meta.query, 'query', 'query');
    this.random = generator(deriveSeed(seed, this.name, 'choices'));
    this.summary = {
      route: this.name,
      source: this.source,
      valid: { sent: 0, accepted: 0, blocked: 0 },
      invalid: { sent: 0, refused: 0, blocked: 0 },
      statuses: {},
      notes: [],
    };
    for (const [part, s] of [
      ['body', this.body],
      ['query', this.query],
    ] as const) {
      for (const f of s?.fields ?? []) if (f.note !== null) this.summary.notes.push(`${part === 'query' ? 'query.' : ''}${f.name}: ${f.note}`);
    }
  }

  async run(findings: FuzzFinding[]): Promise<RouteSummary> {
    let unbuilt = 0;
    for (let i = 0; i < this.runs; i++) {
      const valid = this.validRequest();
      if (valid === null) {
        unbuilt++;
        continue;
      }
      await this.send(valid, null, findings);
    }
    const targets = this.targets();
    for (let i = 0; i < this.runs && targets.length > 0; i++) {
      const target = targets[i % targets.length]!;
      const request = this.validRequest(target);
      if (request === null) {
        unbuilt++;
        continue;
      }
      await this.send(request, target, findings);
    }
    if (unbuilt > 0) this.summary.notes.push(`${unbuilt} request${unbuilt === 1 ? '' : 's'} not sent: a required field has no valid value to send`);
    if (targets.length === 0) this.summary.notes.push('no invalid request can be made: every field is optional and accepts any value');
    return this.summary;
  }

  /** Every (field, mutation) an invalid request can use. */
  private targets(): Target[] {
    const out: Target[] = [];
    for (const [part, s] of [
      ['body', this.body],
      ['query', this.query],
    ] as const) {
      for (const field of s?.fields ?? []) for (const inv of field.invalid) out.push({ section: part, field, mutation: inv.mutation, samples: inv.samples });
    }
    return out;
  }

  /** A valid request, or one with exactly `broken`'s field made invalid; null when a required field has no valid value. */
  private validRequest(broken?: Target): FuzzRequest | null {
    const body = this.body === null ? null : this.choose(this.body, broken?.section === 'body' ? broken : undefined);
    const query = this.query === null ? null : this.choose(this.query, broken?.section === 'query' ? broken : undefined);
    if ((this.body !== null && body === null) || (this.query !== null && query === null)) return null;
    return buildRequest(
      this.method,
      this.path,
      query,
      body === null ? null : { transport: this.body!.transport === 'multipart' ? 'multipart' : 'json', fields: body },
      this.headers,
    );
  }

  /** Values for one section: valid ones, then the broken field (if it is in this section) replaced. */
  private choose(section: Section, broken: Target | undefined): [string, Wire][] | null {
    const chosen = new Map<string, Sample>();
    for (const f of section.fields) {
      if (f === broken?.field) continue;
      if (!f.required && (f.valid.length === 0 || this.random() < OMIT_CHANCE)) {
        // JSON: a null stands for "not sent" too.
        if (section.transport === 'json' && this.random() < NULL_CHANCE) chosen.set(f.name, { wire: { kind: 'json', value: null }, value: null });
        continue;
      }
      if (f.valid.length === 0) return null;
      chosen.set(f.name, pick(f.valid, this.random));
    }
    // With a field already broken the request is invalid anyway: a dependent check it upsets may fail too.
    if (!this.settleDependent(section, chosen, broken?.field) && broken === undefined) return null;
    if (broken !== undefined && broken.mutation.kind !== 'missing') chosen.set(broken.field.name, pick(broken.samples, this.random));
    if (broken?.mutation.kind === 'missing' && section.transport === 'json' && this.random() < NULL_CHANCE) {
      chosen.set(broken.field.name, { wire: { kind: 'json', value: null }, value: null });
    }
    // Declared order, so a request reads like the route.
    return section.fields.filter((f) => chosen.has(f.name)).map((f) => [f.name, chosen.get(f.name)!.wire]);
  }

  /**
   * Checks that read other fields (`@same`) run against the whole request: a field failing one
   * takes the value of another field of its type that passes, or is left out when optional.
   */
  private settleDependent(section: Section, chosen: Map<string, Sample>, skip: FieldFuzz | undefined): boolean {
    const input: ValueObject = {};
    const set = (name: string, s: Sample | undefined): void => {
      if (s === undefined) delete input[name];
      else Object.defineProperty(input, name, { value: s.value, enumerable: true, writable: true, configurable: true });
    };
    for (const [name, s] of chosen) set(name, s);
    for (const f of section.fields) {
      const mine = chosen.get(f.name);
      if (f === skip || f.dependent.length === 0 || mine === undefined || mine.value === null) continue;
      const fits = (s: Sample): boolean => f.checks.every((c) => passes(c, s.value, input));
      if (fits(mine)) continue;
      const other = section.fields.find((g) => g !== f && g.type === f.type && chosen.has(g.name) && fits(chosen.get(g.name)!));
      if (other !== undefined) {
        chosen.set(f.name, chosen.get(other.name)!);
        set(f.name, chosen.get(other.name));
      } else if (!f.required) {
        chosen.delete(f.name);
        set(f.name, undefined);
      } else return false;
    }
    return true;
  }

  /** Sends one request and files what came back. */
  private async send(request: FuzzRequest, broken: Target | null, findings: FuzzFinding[]): Promise<void> {
    const errorsBefore = this.logger.errors.length;
    const response = await answer(this.app, request);
    const stats = broken === null ? this.summary.valid : this.summary.invalid;
    stats.sent++;
    this.summary.statuses[String(response.status)] = (this.summary.statuses[String(response.status)] ?? 0) + 1;
    const status = response.status;
    let kind: FindingKind | null = null;
    if (status === 0) kind = 'timeout';
    else if (status >= 500) kind = 'server_error';
    else if (broken === null) {
      // Only validation's own 422 refuses valid input; a handler that answers 422 itself (a key
      // that does not decrypt) has judged input validation let through: that request is blocked.
      if (status === HTTP.validation_failed.status && errorCode(response.body) === HTTP.validation_failed.code) kind = 'valid_refused';
      else if (status < 400) this.summary.valid.accepted++;
      else this.summary.valid.blocked++;
    } else if (status === 422 || (status === 413 && broken.field.type === 'file')) this.summary.invalid.refused++;
    else if (status >= 200 && status < 300) kind = 'invalid_accepted';
    else this.summary.invalid.blocked++;
    if (kind === null) return;

    const field =
      broken !== null
        ? broken.section === 'query'
          ? `query.${broken.field.name}`
          : broken.field.name
        : kind === 'valid_refused'
          ? refusedFields(response.body)
          : null;
    const mutation = broken === null ? null : describeMutation(broken.mutation);
    const same = findings.find((f) => f.kind === kind && f.route === this.name && f.field === field && f.mutation === mutation);
    if (same !== undefined) {
      same.count++;
      return;
    }
    findings.push({
      kind,
      route: this.name,
      source: this.source,
      field,
      mutation,
      status,
      body: response.body.slice(0, MAX_BODY_CHARS),
      count: 1,
      request: describeRequest(request),
      curl: toCurl(request),
      // The request id tag differs between runs; the rest of the line is what matters.
      log: this.logger.errors.slice(errorsBefore).map((line) => line.replace(/^\[[^\]]*\] /, '')),
    });
  }
}

/** Sends the request; a request that throws inside the runtime counts as a 500, one that hangs as status 0. */
async function answer(app: App, request: FuzzRequest): Promise<{ status: number; body: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<{ status: number; body: string }>((resolve) => {
    timer = setTimeout(() => resolve({ status: 0, body: `no answer within ${REQUEST_TIMEOUT_MS} ms` }), REQUEST_TIMEOUT_MS);
  });
  try {
    const sent = inject(app, toInject(request)).then(
      (r) => ({ status: r.status, body: r.body }),
      (e: unknown) => ({ status: 500, body: `inject failed: ${e instanceof Error ? e.message : String(e)}` }),
    );
    return await Promise.race([sent, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The `code` of a JSON error body, or null. */
function errorCode(body: string): unknown {
  try {
    return (JSON.parse(body) as { code?: unknown } | null)?.code ?? null;
  } catch {
    return null;
  }
}

/** The fields a 422 body names in its details: `email, age`. */
function refusedFields(body: string): string | null {
  try {
    const details = (JSON.parse(body) as { details?: { field?: unknown }[] }).details;
    if (!Array.isArray(details)) return null;
    const names = [...new Set(details.map((d) => String(d.field)))];
    return names.length > 0 ? names.join(', ') : null;
  } catch {
    return null;
  }
}

/** One line per route: what was sent and how it was answered. */
function summaryLine(r: RouteSummary): string {
  const statuses = Object.entries(r.statuses)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([s, n]) => `${s}×${n}`)
    .join(' ');
  const lines = [
    `${r.route} (${r.source}): valid ${r.valid.sent} (${r.valid.accepted} accepted, ${r.valid.blocked} blocked), ` +
      `invalid ${r.invalid.sent} (${r.invalid.refused} refused, ${r.invalid.blocked} blocked); statuses ${statuses || 'none'}`,
  ];
  for (const note of r.notes) lines.push(`  note: ${note}`);
  return lines.join('\n');
}

const KIND_TEXT: Record<FindingKind, string> = {
  server_error: 'server error',
  valid_refused: 'valid input refused',
  invalid_accepted: 'invalid input accepted',
  timeout: 'no answer',
};

/** A finding as the command prints it. */
export function findingText(f: FuzzFinding): string {
  const what = f.field === null ? '' : ` field ${f.field}${f.mutation === null ? '' : ` (${f.mutation})`}`;
  const lines = [`FINDING ${KIND_TEXT[f.kind]}: ${f.route} (${f.source})${what}: answered ${f.status}${f.count > 1 ? ` [${f.count} requests]` : ''}`];
  lines.push(`  body: ${f.body}`);
  for (const line of f.log) lines.push(`  log: ${line.split('\n')[0]}`);
  lines.push(`  reproduce: ${f.curl}`);
  return lines.join('\n');
}
