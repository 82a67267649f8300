/**
 * Keeps spec/errors.md exhaustive: every diagnostic code (`'E_…'`) and every runtime or HTTP
 * error code raised in the source (`new RvmError(…, 'code')`, `new HttpError(status, 'code'`,
 * `ctx.fail(…, 'code')`) must be documented there.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const SOURCE_DIRS = ['vm', 'plugins', 'stdlib', 'tools'];

const DIAGNOSTIC_CODE = /'(E_[A-Z][A-Z_]*)'/g;
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
    for (const file of files) for (const m of readFileSync(file, 'utf8').matchAll(pattern)) codes.add(m[1]!);
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
  const codes = new Set([...codesIn(RUNTIME_CODE), ...codesIn(HTTP_CODE), ...codesIn(FAIL_CODE)]);
  assert.ok(codes.has('type_error') && codes.has('payload_too_large'), 'the code patterns no longer match the source');
  assert.deepEqual(undocumented(codes), []);
});
