/**
 * Keeps spec/errors.md and the error catalogue (vm/errors.ts) in step: the page's code tables are
 * the rendering of tools/gen-errors-doc.ts, row for row, and both are exhaustive: every
 * diagnostic code (`'E_…'`, `DIAG.E_…`) and every runtime or HTTP error code raised in the source
 * (`new RvmError(…, 'code')`, `RUNTIME.code`, `HTTP.code`, `ctx.fail(…, 'code')`) must be in the
 * catalogue and documented on the page. The catalogue is
 * also the one place a code is written: a call site names an entry (`RUNTIME.type_error`,
 * `HTTP.not_found.code`, `DIAG.E_ARITY`), so a misspelt code does not compile, and the source is
 * parsed for a catalogue code written as a text where an error is made: an argument of an error
 * constructor, `fail`, `diagnostic`, `errorBody` or `errorResponse`, or a `code` field's value.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { ERROR_CATALOGUE, familiesOf, isUserFacingCode, type ErrorFamily, type HttpErrorEntry } from '../../vm/errors.js';
import { ERROR_BLOCKS, blockEnd, blockStart, renderErrorsDoc } from '../../tools/gen-errors-doc.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const SOURCE_DIRS = ['vm', 'plugins', 'stdlib', 'tools'];

const DIAGNOSTIC_CODE = /'(E_[A-Z][A-Z_]*)'|\b(?:DIAG|ARTEFACT|PLUGIN)\.(E_[A-Z][A-Z_]*)/g;
/** A catalogue entry named at a call site: `RUNTIME.type_error`, `HTTP.not_found`. */
const ENTRY_CODE = /\b(?:RUNTIME|HTTP)\.([a-z][a-z_]*)\b/g;
const RUNTIME_CODE = /new RvmError\([^;]*?,\s*'([a-z][a-z_]*)'\s*\)/g;
const HTTP_CODE = /new HttpError\(\s*\d+,\s*'([a-z][a-z_]*)'/g;
/** `ctx.fail(status, message, 'code')` in natives and guards, `errorBody(message, 'code')` in the runtime. */
const FAIL_CODE = /(?:\.fail|errorBody|errorResponse)\((?:[^;()]|\([^;()]*\))*?,\s*'([a-z][a-z_]*)'\s*[,)]/g;

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

function codesIn(pattern: RegExp): Set<string> {
  const codes = new Set<string>();
  for (const dir of SOURCE_DIRS) {
    let files: string[];
    try {
      files = sources(join(REPO_ROOT, dir));
    } catch {
      continue;
    }
    for (const file of files) for (const m of readFileSync(file, 'utf8').matchAll(pattern)) codes.add((m[1] ?? m[2])!);
  }
  return codes;
}

const documented = readFileSync(join(REPO_ROOT, 'spec', 'errors.md'), 'utf8');

function undocumented(codes: Set<string>): string[] {
  return [...codes].filter((code) => !documented.includes(`\`${code}\``)).sort();
}

test('every diagnostic code in the source is documented in spec/errors.md', () => {
  const codes = codesIn(DIAGNOSTIC_CODE);
  assert.ok(codes.size > 20, `expected many E_ codes in the source, found ${codes.size}`);
  assert.deepEqual(undocumented(codes), []);
});

test('every runtime and HTTP error code raised in the source is documented in spec/errors.md', () => {
  const codes = new Set([...codesIn(RUNTIME_CODE), ...codesIn(HTTP_CODE), ...codesIn(FAIL_CODE), ...codesIn(ENTRY_CODE)]);
  assert.ok(codes.has('type_error') && codes.has('payload_too_large'), 'the code patterns no longer match the source');
  assert.deepEqual(undocumented(codes), []);
});

/** The page's tables: family (by `##` section) → code → its cells after the code. */
function pageRows(): Map<ErrorFamily, Map<string, string[]>> {
  const families: Array<[string, ErrorFamily]> = [
    ['Compile-time', 'diagnostic'],
    ['Artefact', 'artefact'],
    ['Plugin', 'plugin'],
    ['Runtime', 'runtime'],
    ['HTTP', 'http'],
  ];
  const rows = new Map<ErrorFamily, Map<string, string[]>>(families.map(([, f]) => [f, new Map()]));
  let family: ErrorFamily | null = null;
  for (const line of documented.split('\n')) {
    if (line.startsWith('## ')) family = families.find(([title]) => line.slice(3).startsWith(title))?.[1] ?? null;
    const row = /^\| `([^`]+)` \|(.*)\|$/.exec(line);
    if (row === null || family === null || row[1] === 'http_<status>') continue;
    // The cells after the code, an empty example cell included.
    rows.get(family)!.set(
      row[1]!,
      row[2]!.split('|').map((cell) => cell.trim()),
    );
  }
  return rows;
}

test('every catalogue entry has its row on the page, with the same doc and status, and no row is missing from the catalogue', () => {
  const rows = pageRows();
  for (const [family, byCode] of rows) {
    const entries = ERROR_CATALOGUE.filter((e) => e.family === family);
    assert.deepEqual([...byCode.keys()].sort(), entries.map((e) => e.code).sort(), `the ${family} table and the catalogue list other codes`);
    for (const entry of entries) {
      const cells = byCode.get(entry.code)!;
      if (family === 'http') {
        assert.equal(cells[0], String((entry as HttpErrorEntry).status), `status of ${entry.code}`);
        assert.equal(cells[1], entry.doc, `doc of ${entry.code}`);
      } else {
        assert.equal(cells[0], entry.doc, `doc of ${entry.code}`);
      }
    }
  }
  assert.ok(rows.get('http')!.size > 20 && rows.get('diagnostic')!.size > 40, 'the page tables no longer parse');
});

test("spec/errors.md's code tables are the generator's rendering of the catalogue", () => {
  assert.ok(documented === renderErrorsDoc(documented), 'spec/errors.md is out of date: run `npx tsc -p . && node dist/tools/gen-errors-doc.js`');
  for (const family of ERROR_BLOCKS) assert.equal(documented.split(blockStart(family)).length, 2, `one generated block for ${family}`);
});

test('the generator rewrites a stale row inside a block, keeps the prose, and refuses a page without a block', () => {
  const stale = documented.replace('| `null_field` | reading a field or index of `null` |', '| `null_field` | an old wording |');
  assert.notEqual(stale, documented);
  assert.equal(renderErrorsDoc(stale), documented);
  const prose = documented.replace('There are four families:', 'There are four families, said by hand:');
  assert.equal(renderErrorsDoc(prose), prose);
  assert.throws(() => renderErrorsDoc(documented.replace(blockEnd('runtime'), '')), /no generated block for runtime/);
});

test('every code named in the source is a catalogue entry', () => {
  const codes = new Set([...codesIn(DIAGNOSTIC_CODE), ...codesIn(RUNTIME_CODE), ...codesIn(HTTP_CODE), ...codesIn(FAIL_CODE), ...codesIn(ENTRY_CODE)]);
  assert.deepEqual([...codes].filter((code) => familiesOf(code).length === 0).sort(), []);
});

test('a code is in one family, except the few a body and a native share', () => {
  const shared = [...new Set(ERROR_CATALOGUE.map((e) => e.code))].filter((code) => familiesOf(code).length > 1);
  assert.deepEqual(shared, ['invalid_json']);
});

test('the CLI reports diagnostic, artefact and plugin codes to the user, and nothing else', () => {
  for (const code of ['E_CONFIG', 'E_ARTEFACT_CORRUPT', 'E_PLUGIN_CLASH', 'W_NOT_CONFIGURED']) assert.equal(isUserFacingCode(code), true, code);
  for (const code of ['type_error', 'not_found', 'E_NOT_A_CODE', 'ENOENT']) assert.equal(isUserFacingCode(code), false, code);
});

/**
 * Left out, each for its reason: the example plugin is a third party's source, whose own codes
 * are its own to write; records and the bundle reader were left out while they were being written,
 * and their codes join the scan once checked against the catalogue.
 */
const NOT_SCANNED = ['plugins/example-plugin/', 'stdlib/records/', 'vm/bytecode/bundle.ts'];
/** Calls whose text arguments are error codes when they name one. */
const ERROR_CALLS = /(?:Error|^fail|^diagnostic|^report|^errorBody|^errorResponse)$/;

function calleeName(node: ts.CallExpression | ts.NewExpression): string {
  const callee = node.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return '';
}

/** A catalogue code between quotes: the text every code written as a text contains. */
const QUOTED_CODE = new RegExp(`(['"])(?:${[...new Set(ERROR_CATALOGUE.map((e) => e.code))].join('|')})\\1`);

function isCode(node: ts.Node | undefined): node is ts.StringLiteral {
  return node !== undefined && ts.isStringLiteral(node) && familiesOf(node.text).length > 0;
}

/** `file:line: 'code'` for each catalogue code written as a text where an error is made. */
function literalCodes(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: ts.StringLiteral[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isCallExpression(node) || ts.isNewExpression(node)) && ERROR_CALLS.test(calleeName(node))) {
      for (const arg of node.arguments ?? []) if (isCode(arg)) found.push(arg);
    }
    if ((ts.isPropertyAssignment(node) || ts.isPropertyDeclaration(node)) && node.name.getText(source) === 'code' && isCode(node.initializer)) {
      found.push(node.initializer);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found.map((s) => `${file}:${source.getLineAndCharacterOfPosition(s.getStart()).line + 1}: '${s.text}'`);
}

/** literalCodes of a file, parsed only when a code appears in it between quotes (parsing every file is most of this suite's time). */
function writtenCodes(file: string, text: string): string[] {
  return QUOTED_CODE.test(text) ? literalCodes(file, text) : [];
}

test('no error code is written as a text at a call site: each names its catalogue entry', () => {
  const written: string[] = [];
  let scanned = 0;
  for (const dir of SOURCE_DIRS) {
    for (const path of sources(join(REPO_ROOT, dir))) {
      const file = relative(REPO_ROOT, path).split('\\').join('/');
      if (NOT_SCANNED.some((skip) => file.startsWith(skip))) continue;
      scanned++;
      const text = readFileSync(path, 'utf8');
      written.push(...writtenCodes(file, text));
    }
  }
  assert.ok(scanned > 100, `expected the source tree, scanned ${scanned} files`);
  assert.deepEqual(written, []);
});

test('the scan sees a code written as a text in each shape it looks for', () => {
  const sample = [
    "throw new RvmError('no', 'type_error');",
    "ctx.fail(404, 'Not found', 'not_found');",
    "diagnostic('E_ARITY', 'm', at);",
    "const spec = { status: 403, code: 'forbidden' };",
    "class Gone extends Error { readonly code = 'E_APP_EXISTS'; }",
    "throw new RvmError('no', RUNTIME.type_error);",
    "const kind = { kind: 'not_found' };",
  ].join('\n');
  assert.deepEqual(writtenCodes('sample.ts', sample), [
    "sample.ts:1: 'type_error'",
    "sample.ts:2: 'not_found'",
    "sample.ts:3: 'E_ARITY'",
    "sample.ts:4: 'forbidden'",
    "sample.ts:5: 'E_APP_EXISTS'",
  ]);
});
