/**
 * Outside check: the showcase's OpenAPI document (what `rvm openapi` prints and the
 * server serves), 3.1 and 3.0, passes Redocly's linter with its recommended ruleset without an
 * error or a warning; an app's with record types without an error. Redocly is a devDependency (@redocly/cli), run from node_modules/.bin.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RECORDS_APP } from '../stdlib/reference-fixtures.js';
import { tempApp } from '../support/temp-app.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(ROOT, 'dist', 'tools', 'cli.js');
const REDOCLY = join(ROOT, 'node_modules', '.bin', 'redocly');
const SHOWCASE = join(ROOT, 'examples', 'showcase');

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; severity: string; message: string; location?: { pointer?: string }[] }[];
}

/** Lints `file` with the recommended rules; the JSON report of `--format json`. */
function lint(file: string, cwd: string): LintReport {
  assert.ok(existsSync(REDOCLY), `${REDOCLY} is missing: @redocly/cli is a devDependency; run npm ci (or .ci/run)`);
  // No telemetry and no update check: the run must not depend on the network.
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
  const r = spawnSync(REDOCLY, ['lint', '--extends', 'recommended', '--format', 'json', file], { cwd, encoding: 'utf8', env, timeout: 120_000 });
  assert.ok(r.stdout.trim().startsWith('{'), `redocly printed no report (exit ${r.status}):\n${r.stderr}`);
  return JSON.parse(r.stdout) as LintReport;
}

describe('Redocly lint (recommended) of the showcase document', () => {
  const tmp = tempApp({ after });

  for (const version of ['3.1', '3.0']) {
    test(`OpenAPI ${version}: no errors and no warnings`, () => {
      const file = join(tmp, `showcase-${version}.json`);
      const made = spawnSync(process.execPath, [CLI, 'openapi', SHOWCASE, '--version', version, '-o', file], { encoding: 'utf8', timeout: 60_000 });
      assert.equal(made.status, 0, made.stderr);
      const report = lint(file, tmp);
      const problems = report.problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location?.[0]?.pointer ?? '?'}: ${p.message}`);
      assert.deepEqual(problems, []);
      assert.deepEqual([report.totals.errors, report.totals.warnings], [0, 0]);
    });
  }
});

describe('Redocly lint (recommended) of an app with records', () => {
  const app = tempApp({ after }, RECORDS_APP);
  const tmp = tempApp({ after });

  for (const version of ['3.1', '3.0']) {
    test(`OpenAPI ${version}: record schemas and their $refs lint without errors`, () => {
      const file = join(tmp, `records-${version}.json`);
      const made = spawnSync(process.execPath, [CLI, 'openapi', app, '--version', version, '-o', file], { encoding: 'utf8', timeout: 60_000 });
      assert.equal(made.status, 0, made.stderr);
      const report = lint(file, tmp);
      const errors = report.problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId} at ${p.location?.[0]?.pointer ?? '?'}: ${p.message}`);
      assert.deepEqual(errors, []);
    });
  }
});
