/**
 * Reads the conformance cases under spec/conformance/: finds every case (a `.rvm` file or a
 * directory of files) and parses the expectation comments in it into a plan the runner executes.
 * The format is described in spec/conformance/README.md.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** One source file of a case: its path inside the app and its text. */
export interface CaseFile {
  /** Path inside the app directory, `/`-separated: `items.rvm`, `api/_middleware.rvm`. */
  path: string;
  /** Path relative to the repository, for messages: `spec/conformance/http/x.rvm`. */
  display: string;
  source: string;
}

/** Where a directive was written, for failure messages. */
export interface DirectiveAt {
  file: CaseFile;
  line: number;
}

export type Expectation =
  | { kind: 'status'; status: number; at: DirectiveAt }
  | { kind: 'body'; text: string; at: DirectiveAt }
  | { kind: 'header'; name: string; value: string; at: DirectiveAt }
  | { kind: 'no-header'; name: string; at: DirectiveAt }
  /** The JSON body's `code` field (error bodies), without pinning the message's wording. */
  | { kind: 'code'; code: string; at: DirectiveAt }
  /** `line` is set when the directive trails a code line: the error must point there. */
  | { kind: 'runtime-error'; code: string; line: number | null; at: DirectiveAt };

/** One part of a `// multipart:` body: a text field, or a sample file of a kind. */
export type MultipartPart = { name: string; text: string } | { name: string; kind: string; size: number | null; filename: string };

/** Sample file kinds `// multipart:` knows, with the extension of their default file name. */
export const SAMPLE_KINDS: Readonly<Record<string, string>> = {
  png: 'png',
  jpeg: 'jpg',
  gif: 'gif',
  webp: 'webp',
  pdf: 'pdf',
  docx: 'docx',
  text: 'txt',
  zip: 'zip',
  rtf: 'rtf',
  bin: 'bin',
};

/** One request to send, with what its response must satisfy. */
export interface RequestStep {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | null;
  /** A multipart/form-data body to send instead of `body`. */
  multipart: MultipartPart[] | null;
  at: DirectiveAt | null;
  expectations: Expectation[];
}

/** A line the app's `log()` must write, in order. */
export interface LogExpectation {
  text: string;
  at: DirectiveAt;
}

/** A compile-time diagnostic the app must report when it is loaded. */
export interface CompileErrorExpectation {
  file: string;
  line: number;
  col: number;
  code: string;
  /** Text the diagnostic's hint must contain (`// expect error 3:9: CODE hint: did you mean 'x'?`). */
  hint: string | null;
  at: DirectiveAt;
}

/** A parsed case, ready to run. */
export interface ConformanceCase {
  /** `category/name`, used as the test name. */
  name: string;
  files: CaseFile[];
  requests: RequestStep[];
  logs: LogExpectation[];
  compileErrors: CompileErrorExpectation[];
  /** Problems in the case file itself (unknown directive, expectation before any request...). */
  problems: string[];
}

const CASE_EXTENSION = '.rvm';

/**
 * Directives: `// NAME: rest` where NAME is one of these. The first `//` on a line that is
 * followed by a directive counts, so `'http://x'` in code does not confuse the reader.
 */
const DIRECTIVE =
  /\/\/\s*(request|header|raw-body|multipart|request-body-size|expect|expect status|expect body|expect code|expect header|expect no header|expect runtime error|expect error (\d+):(\d+)):[ \t]?(.*)$/;

/** A comment that looks like an expectation but matches no directive: almost surely a typo. */
const LOOKS_LIKE_DIRECTIVE = /\/\/\s*(expect|request|header|raw-body|multipart)\b/;

/** Every case under `root`, sorted by name. */
export function discoverCases(root: string, repoRoot: string): ConformanceCase[] {
  const cases: ConformanceCase[] = [];
  for (const category of readdirSync(root).sort()) {
    const categoryDir = join(root, category);
    if (!statSync(categoryDir).isDirectory()) continue;
    for (const entry of readdirSync(categoryDir).sort()) {
      const path = join(categoryDir, entry);
      if (statSync(path).isDirectory()) {
        const files = listFiles(path).map((abs) => readCaseFile(abs, path, repoRoot));
        cases.push(parseCase(`${category}/${entry}`, files));
      } else if (entry.endsWith(CASE_EXTENSION)) {
        cases.push(parseCase(`${category}/${entry.slice(0, -CASE_EXTENSION.length)}`, [readCaseFile(path, categoryDir, repoRoot)]));
      }
    }
  }
  return cases;
}

function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...listFiles(path));
    else out.push(path);
  }
  return out;
}

function readCaseFile(abs: string, base: string, repoRoot: string): CaseFile {
  return {
    path: relative(base, abs).split(sep).join('/'),
    display: relative(repoRoot, abs).split(sep).join('/'),
    source: readFileSync(abs, 'utf8'),
  };
}

/** Parses the directives of a case's files (in sorted path order, lines in order). */
export function parseCase(name: string, unsorted: CaseFile[]): ConformanceCase {
  const files = [...unsorted].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const result: ConformanceCase = { name, files, requests: [], logs: [], compileErrors: [], problems: [] };
  let pendingHeaders: Record<string, string> = {};
  let pendingBody: { contentType: string; text: string } | null = null;
  let pendingMultipart: MultipartPart[] | null = null;
  const detached: Expectation[] = [];

  const current = (): Expectation[] => result.requests[result.requests.length - 1]?.expectations ?? detached;
  const addRequest = (method: string, url: string, body: string | null, contentType: string | null, at: DirectiveAt): void => {
    const headers = { ...pendingHeaders };
    let sent = body;
    if (pendingBody) {
      sent = pendingBody.text;
      headers['content-type'] ??= pendingBody.contentType;
    } else if (body !== null && contentType !== null) {
      headers['content-type'] ??= contentType;
    }
    result.requests.push({ method, url, headers, body: pendingMultipart ? null : sent, multipart: pendingMultipart, at, expectations: [] });
    pendingHeaders = {};
    pendingBody = null;
    pendingMultipart = null;
  };

  for (const file of files) {
    const lines = file.source.split('\n');
    lines.forEach((raw, index) => {
      const text = raw.replace(/\r$/, '');
      const at: DirectiveAt = { file, line: index + 1 };
      const where = `${file.display}:${at.line}`;
      const m = findDirective(text);
      if (!m) {
        if (LOOKS_LIKE_DIRECTIVE.test(text)) {
          result.problems.push(`${where}: unrecognised directive: ${text.trim()}`);
        }
        return;
      }
      const { directive, rest, errLine, errCol, trailsCode } = m;
      switch (directive) {
        case 'request': {
          const r = /^([A-Z]+)\s+(\S+)(?:\s+(.*))?$/.exec(rest.trim());
          if (!r) return void result.problems.push(`${where}: bad request directive: ${rest}`);
          addRequest(r[1]!, r[2]!, r[3] ?? null, 'application/json', at);
          return;
        }
        case 'request-body-size': {
          const r = /^([A-Z]+)\s+(\S+)\s+(\d+)$/.exec(rest.trim());
          if (!r) return void result.problems.push(`${where}: bad request-body-size directive: ${rest}`);
          addRequest(r[1]!, r[2]!, jsonStringOfSize(Number(r[3])), 'application/json', at);
          return;
        }
        case 'header': {
          const h = /^([^:\s]+):\s?(.*)$/.exec(rest);
          if (!h) return void result.problems.push(`${where}: bad header directive: ${rest}`);
          pendingHeaders[h[1]!.toLowerCase()] = h[2]!;
          return;
        }
        case 'raw-body': {
          const bar = rest.indexOf('|');
          if (bar < 0) return void result.problems.push(`${where}: raw-body needs 'content-type | text'`);
          pendingBody = { contentType: rest.slice(0, bar).trim(), text: rest.slice(bar + 1).replace(/^ /, '') };
          return;
        }
        case 'multipart': {
          const parsed = parseMultipart(rest);
          if (typeof parsed === 'string') return void result.problems.push(`${where}: ${parsed}`);
          pendingMultipart = parsed;
          return;
        }
        case 'expect':
          result.logs.push({ text: rest, at });
          return;
        case 'expect status': {
          const status = Number(rest.trim());
          if (!Number.isInteger(status)) return void result.problems.push(`${where}: bad status: ${rest}`);
          current().push({ kind: 'status', status, at });
          return;
        }
        case 'expect code':
          current().push({ kind: 'code', code: rest.trim(), at });
          return;
        case 'expect body':
          current().push({ kind: 'body', text: rest.trim(), at });
          return;
        case 'expect header': {
          const h = /^([^:\s]+):\s?(.*)$/.exec(rest);
          if (!h) return void result.problems.push(`${where}: bad expect header directive: ${rest}`);
          current().push({ kind: 'header', name: h[1]!.toLowerCase(), value: h[2]!, at });
          return;
        }
        case 'expect no header':
          current().push({ kind: 'no-header', name: rest.trim().toLowerCase(), at });
          return;
        case 'expect runtime error':
          current().push({ kind: 'runtime-error', code: rest.trim(), line: trailsCode ? at.line : null, at });
          return;
        default: {
          const h = /^(\S+)\s+hint:\s*(.+)$/.exec(rest.trim());
          result.compileErrors.push({ file: file.path, line: errLine!, col: errCol!, code: h ? h[1]! : rest.trim(), hint: h ? h[2]! : null, at });
        }
      }
    });
  }

  if (result.requests.length === 0 && result.compileErrors.length === 0) {
    // The implicit request: expectations written anywhere in the case refer to it.
    result.requests.push({ method: 'GET', url: '/', headers: {}, body: null, multipart: null, at: null, expectations: [...detached] });
  } else if (detached.length > 0) {
    for (const e of detached) result.problems.push(`${e.at.file.display}:${e.at.line}: expectation before the first request`);
  }
  if (result.compileErrors.length > 0 && result.requests.length > 0) {
    result.problems.push(`${name}: a case expecting compile errors cannot send requests`);
  }
  return result;
}

interface FoundDirective {
  directive: string;
  rest: string;
  errLine?: number;
  errCol?: number;
  /** True when code precedes the comment on the same line. */
  trailsCode: boolean;
}

function findDirective(text: string): FoundDirective | null {
  let from = 0;
  for (;;) {
    const slash = text.indexOf('//', from);
    if (slash < 0) return null;
    const m = DIRECTIVE.exec(text.slice(slash));
    if (m && m.index === 0) {
      const isError = m[1]!.startsWith('expect error');
      const found: FoundDirective = { directive: isError ? 'expect error' : m[1]!, rest: m[4]!, trailsCode: text.slice(0, slash).trim() !== '' };
      if (isError) {
        found.errLine = Number(m[2]);
        found.errCol = Number(m[3]);
      }
      return found;
    }
    from = slash + 2;
  }
}

/**
 * Parses `name=Ada; age=42; avatar=@png:me.png; doc=@pdf*6000` into parts: a value starting
 * with `@` is a sample file of that kind, `*SIZE` pads it to SIZE bytes, `:NAME` names it
 * (default `file.EXT`). Returns a message for a malformed list.
 */
export function parseMultipart(rest: string): MultipartPart[] | string {
  const parts: MultipartPart[] = [];
  for (const item of rest.split(';')) {
    const text = item.trim();
    if (text === '') continue;
    const eq = text.indexOf('=');
    if (eq <= 0) return `bad multipart part '${text}': write name=value or name=@kind[*size][:filename]`;
    const name = text.slice(0, eq);
    const value = text.slice(eq + 1);
    if (!value.startsWith('@')) {
      parts.push({ name, text: value });
      continue;
    }
    const m = /^@([a-z]+)(?:\*(\d+))?(?::(.+))?$/.exec(value);
    const ext = m ? SAMPLE_KINDS[m[1]!] : undefined;
    if (!m || ext === undefined) return `bad multipart file '${value}': kinds are ${Object.keys(SAMPLE_KINDS).join(', ')}`;
    parts.push({ name, kind: m[1]!, size: m[2] === undefined ? null : Number(m[2]), filename: m[3] ?? `file.${ext}` });
  }
  return parts.length > 0 ? parts : 'a multipart directive needs at least one part';
}

/** A JSON text of exactly `size` bytes: a string of `a`s in quotes. */
export function jsonStringOfSize(size: number): string {
  return `"${'a'.repeat(Math.max(0, size - 2))}"`;
}
