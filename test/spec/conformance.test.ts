/**
 * The conformance suite: every case under spec/conformance/ is loaded as an app and its
 * expectation comments are checked. The suite runs three times: compiled in memory, through the
 * msgpack round trip (as a bundle is read), and from a warm cache as a second start serves it
 * (lazily linked, validation planned on first request), so neither the artefact format nor the
 * cache can change what a program means. A case's files are written once, into one folder the
 * three share; each way has a database of its own (two in memory, the third in a file there), so
 * none sees records another stored.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp, loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger, type Logger } from '../../vm/runtime/log.js';
import { DiagnosticError, type Diagnostic } from '../../vm/diagnostics.js';
import { discoverCases, type ConformanceCase, type DirectiveAt, type Expectation, type MultipartPart, type RequestStep } from './conformance-cases.js';
import { SAMPLES } from '../vm/runtime/file-samples.js';
import { tempApp, writeFiles } from '../support/temp-app.js';
import { SQLITE_IN_MEMORY } from '../../stdlib/records/database.js';

/** The repository root: this file runs from dist/test/spec/. */
const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CASES_ROOT = join(REPO_ROOT, 'spec', 'conformance');

interface InjectedResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

interface Outcome {
  failures: string[];
}

const cases = discoverCases(CASES_ROOT, REPO_ROOT);

/** How a case is loaded: see the header. */
type LoadMode = 'memory' | 'round trip' | 'warm cache';
const MODES: Record<LoadMode, string> = {
  memory: 'conformance (compiled in memory)',
  'round trip': 'conformance (msgpack round trip)',
  'warm cache': 'conformance (second start from the cache)',
};

/** Where the cases' folders are made, removed once every way has run. */
const casesRoot = tempApp({ after });
/** Each case's folder by name, written on first use. */
const caseDirs = new Map<string, string>();

/** The folder holding the case's files. */
function caseDir(c: ConformanceCase): string {
  let dir = caseDirs.get(c.name);
  if (dir === undefined) {
    dir = join(casesRoot, String(caseDirs.size));
    writeFiles(dir, Object.fromEntries(c.files.map((file) => [file.path, file.source])));
    caseDirs.set(c.name, dir);
  }
  return dir;
}

for (const [mode, title] of Object.entries(MODES) as [LoadMode, string][]) {
  describe(title, () => {
    test('finds the cases', () => {
      assert.ok(cases.length > 0, `no cases found under ${CASES_ROOT}`);
    });
    for (const c of cases) {
      test(c.name, async () => {
        const outcome = await runCase(c, mode);
        if (outcome.failures.length > 0) assert.fail(`${c.name}\n  ${outcome.failures.join('\n  ')}`);
      });
    }
  });
}

/** Loads the case as an app from its folder, sends its requests and checks every directive. */
async function runCase(c: ConformanceCase, mode: LoadMode): Promise<Outcome> {
  const failures = [...c.problems];
  const dir = caseDir(c);
  const logLines: string[] = [];
  // The records of two ways in memory, of the third in a file of the app folder, read by the
  // reader processes as `rvm run` reads them: the same SQL either way, and a reader's start
  // (a process) paid once per case, not three times.
  const env = { ...process.env, SQLITE_PATH: mode === 'warm cache' ? join('.rvm', 'warm-cache.sqlite') : SQLITE_IN_MEMORY };
  const options = { dev: true, cache: mode === 'warm cache', roundTrip: mode === 'round trip', logger: quietLogger(), settings: { env } };
  // A build fills the cache and leaves the link proof, as a first start does (one with errors
  // caches nothing, so the second start below reports the same diagnostics).
  if (mode === 'warm cache') await buildApp(dir, options);
  let app: Awaited<ReturnType<typeof loadApp>>;
  try {
    app = await loadApp(dir, { ...options, onAppLog: (message: string) => void logLines.push(message) });
  } catch (error) {
    if (!(error instanceof DiagnosticError)) throw error;
    checkCompileErrors(c, error.diagnostics, failures);
    return { failures };
  }
  try {
    if (c.compileErrors.length > 0) {
      failures.push(`${where(c.compileErrors[0]!.at)}: expected the app to fail to compile, but it loaded`);
      return { failures };
    }
    if (mode === 'warm cache' && app.program.chunks.some((chunk) => chunk.bound))
      failures.push('the second start bound chunks up front: it did not link lazily');
    for (const step of c.requests) {
      const response = await send(app, step);
      for (const e of step.expectations) checkExpectation(e, response, failures);
    }
  } finally {
    await app.close();
  }
  checkLogs(c, logLines, failures);
  return { failures };
}

/** A logger that writes nothing: request lines and error reports stay out of the test output. */
function quietLogger(): Logger {
  return captureLogger();
}

async function send(app: Awaited<ReturnType<typeof loadApp>>, step: RequestStep): Promise<InjectedResponse> {
  const request: { method: string; url: string; headers: Record<string, string>; body?: string | FormData } = {
    method: step.method,
    url: step.url,
    headers: step.headers,
  };
  if (step.multipart !== null) request.body = formData(step.multipart);
  else if (step.body !== null) request.body = step.body;
  const response = await inject(app, request);
  return { status: response.status, headers: response.headers as InjectedResponse['headers'], body: response.body };
}

/** Sample bytes by `// multipart:` kind; `bin` is no known format. */
const SAMPLE_BYTES: Record<string, Uint8Array> = {
  png: SAMPLES.png!,
  jpeg: SAMPLES.jpeg!,
  gif: SAMPLES.gif!,
  webp: SAMPLES.webp!,
  pdf: SAMPLES.pdf!,
  docx: SAMPLES.docx!,
  text: SAMPLES.text!,
  zip: SAMPLES.zip!,
  rtf: SAMPLES.rtf!,
  bin: SAMPLES.garbage!,
};

/** A sample file padded to `size` bytes: spaces keep text text, zeros suit every binary kind. */
function sampleFile(kind: string, size: number | null): Uint8Array {
  const head = SAMPLE_BYTES[kind]!;
  if (size === null || size <= head.length) return size === null ? head : head.subarray(0, size);
  const out = new Uint8Array(size).fill(kind === 'text' ? 0x20 : 0);
  out.set(head);
  return out;
}

function formData(parts: MultipartPart[]): FormData {
  const form = new FormData();
  for (const part of parts) {
    if ('text' in part) form.append(part.name, part.text);
    else form.append(part.name, new Blob([sampleFile(part.kind, part.size)]), part.filename);
  }
  return form;
}

function where(at: DirectiveAt): string {
  return `${at.file.display}:${at.line}`;
}

function header(response: InjectedResponse, name: string): string | undefined {
  for (const [key, value] of Object.entries(response.headers)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    return Array.isArray(value) ? value.join(', ') : String(value);
  }
  return undefined;
}

function headerValues(response: InjectedResponse, name: string): string[] {
  for (const [key, value] of Object.entries(response.headers)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    return Array.isArray(value) ? value.map(String) : [String(value)];
  }
  return [];
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function checkExpectation(e: Expectation, response: InjectedResponse, failures: string[]): void {
  const got = `got ${response.status} ${response.body.slice(0, 300)}`;
  switch (e.kind) {
    case 'status':
      if (response.status !== e.status) failures.push(`${where(e.at)}: expect status ${e.status}, ${got}`);
      return;
    case 'body': {
      const isJson = /json/i.test(header(response, 'content-type') ?? '');
      const expected = parseJson(e.text);
      const actual = parseJson(response.body);
      if (isJson && expected.ok && actual.ok) {
        try {
          assert.deepStrictEqual(actual.value, expected.value);
        } catch {
          failures.push(`${where(e.at)}: expect body ${e.text}, ${got}`);
        }
      } else if (response.body !== e.text) {
        failures.push(`${where(e.at)}: expect body ${JSON.stringify(e.text)}, got ${JSON.stringify(response.body.slice(0, 300))}`);
      }
      return;
    }
    case 'code': {
      const parsed = parseJson(response.body);
      const code = parsed.ok && parsed.value !== null && typeof parsed.value === 'object' ? (parsed.value as Record<string, unknown>).code : undefined;
      if (code !== e.code) failures.push(`${where(e.at)}: expect code ${e.code}, ${got}`);
      return;
    }
    case 'header': {
      const values = headerValues(response, e.name);
      if (!values.includes(e.value) && values.join(', ') !== e.value) {
        failures.push(
          `${where(e.at)}: expect header ${e.name}: ${e.value}, got ${values.length ? values.map((v) => JSON.stringify(v)).join(' | ') : 'no such header'}`,
        );
      }
      return;
    }
    case 'no-header': {
      const value = header(response, e.name);
      if (value !== undefined) failures.push(`${where(e.at)}: expect no header ${e.name}, got ${JSON.stringify(value)}`);
      return;
    }
    case 'runtime-error': {
      const parsed = parseJson(response.body);
      const body = parsed.ok && parsed.value !== null && typeof parsed.value === 'object' ? (parsed.value as Record<string, unknown>) : {};
      if (response.status !== 500 || body.code !== e.code) {
        failures.push(`${where(e.at)}: expect runtime error ${e.code}, ${got}`);
        return;
      }
      const at = typeof body.at === 'string' ? body.at : '';
      if (!/\.rvm:\d+$/.test(at)) failures.push(`${where(e.at)}: runtime error body lacks "at": "file.rvm:LINE", ${got}`);
      else if (e.line !== null && !at.endsWith(`${e.at.file.path}:${e.line}`)) {
        failures.push(`${where(e.at)}: runtime error should point at ${e.at.file.path}:${e.line}, got "at": ${JSON.stringify(at)}`);
      }
      return;
    }
  }
}

function checkLogs(c: ConformanceCase, lines: string[], failures: string[]): void {
  const n = Math.max(lines.length, c.logs.length);
  for (let i = 0; i < n; i++) {
    const expected = c.logs[i];
    const actual = lines[i];
    if (expected === undefined) {
      failures.push(`${c.name}: unexpected log line ${JSON.stringify(actual)} (no more expect: directives)`);
      return;
    }
    if (actual === undefined) {
      failures.push(`${where(expected.at)}: expect ${JSON.stringify(expected.text)}, but the app logged nothing more`);
      return;
    }
    if (actual !== expected.text) {
      failures.push(`${where(expected.at)}: expect ${JSON.stringify(expected.text)}, got ${JSON.stringify(actual)}`);
      return;
    }
  }
}

function checkCompileErrors(c: ConformanceCase, diagnostics: Diagnostic[], failures: string[]): void {
  const errors = diagnostics.filter((d) => d.severity === 'error');
  const key = (file: string, line: number, col: number, code: string): string => `${file}:${line}:${col} ${code}`;
  const normalise = (file: string): string => file.replace(/\\/g, '/').replace(/^\.\//, '');
  const actual = new Set(errors.map((d) => key(normalise(d.file), d.line, d.col, d.code)));
  const expected = new Set<string>();
  for (const e of c.compileErrors) {
    const k = key(e.file, e.line, e.col, e.code);
    expected.add(k);
    if (!actual.has(k)) failures.push(`${where(e.at)}: expect error ${k}, got ${[...actual].join('; ') || 'no errors'}`);
    else if (e.hint !== null) {
      const d = errors.find((x) => key(normalise(x.file), x.line, x.col, x.code) === k)!;
      if (!(d.hint ?? '').includes(e.hint))
        failures.push(`${where(e.at)}: expect hint ${JSON.stringify(e.hint)} for ${k}, got ${JSON.stringify(d.hint ?? null)}`);
    }
  }
  for (const k of actual) {
    if (!expected.has(k)) failures.push(`${c.name}: unexpected error ${k}`);
  }
  if (c.compileErrors.length === 0) failures.push(`${c.name}: the app failed to compile: ${[...actual].join('; ')}`);
}
