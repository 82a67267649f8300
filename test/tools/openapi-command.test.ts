/**
 * `rvm openapi DIR [-o FILE] [--version 3.0|3.1] [--yaml]`: the same document the server
 * serves, printed or written; compile errors are diagnostics.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { openapiCommand } from '../../tools/commands/openapi.js';
import { UsageError, type ParsedArgs } from '../../tools/commands/common.js';
import { DiagnosticError } from '../../vm/diagnostics.js';
import { loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { KITCHEN_SINK, assertValidOpenApi } from '../stdlib/reference-fixtures.js';
import { tempApp } from '../support/temp-app.js';

function args(positionals: string[], flags: Record<string, string | true> = {}): ParsedArgs {
  return { positionals, flags: new Map(Object.entries(flags)), help: false };
}

/** Runs the command with its stdout kept (and its stderr, the "wrote" line, dropped). */
async function run(a: ParsedArgs): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const code = await openapiCommand(a, { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: () => true }, env: process.env });
  return { code, stdout };
}

describe('rvm openapi', () => {
  test('prints the 3.1 document the server serves, valid', async (t) => {
    const dir = tempApp(t, KITCHEN_SINK);
    const { code, stdout } = await run(args([dir]));
    assert.equal(code, 0);
    const printed = JSON.parse(stdout) as Record<string, any>;
    assert.equal(printed.openapi, '3.1.0');
    await assertValidOpenApi(printed, 'printed');
    const app = await loadApp(dir, { cache: false, logger: captureLogger(), dev: true });
    try {
      const served = (await inject(app, { url: '/_app/rest-api/openapi.json' })).json() as Record<string, any>;
      assert.deepEqual(printed.paths, served.paths, 'the CLI and the server document the same operations');
      assert.deepEqual(printed.components, served.components);
    } finally {
      await app.close();
    }
  });

  test('--version 3.0 --yaml, and -o FILE (a .yaml name writes YAML)', async (t) => {
    const dir = tempApp(t, KITCHEN_SINK);
    const yaml = await run(args([dir], { version: '3.0', yaml: true }));
    const doc = parseYaml(yaml.stdout) as Record<string, any>;
    assert.equal(doc.openapi, '3.0.3');
    await assertValidOpenApi(doc, '3.0 yaml');
    const jsonFile = join(dir, 'out.json');
    assert.equal((await run(args([dir], { output: jsonFile }))).stdout, '');
    assert.equal((JSON.parse(readFileSync(jsonFile, 'utf8')) as Record<string, any>).openapi, '3.1.0');
    const yamlFile = join(dir, 'out.yaml');
    await run(args([dir], { output: yamlFile, version: '3.0' }));
    assert.equal((parseYaml(readFileSync(yamlFile, 'utf8')) as Record<string, any>).openapi, '3.0.3');
  });

  test('an unknown --version is a usage error', async (t) => {
    const dir = tempApp(t, { 'a.rvm': 'route GET /a {\n  response.ok(1)\n}\n' });
    await assert.rejects(run(args([dir], { version: '2.0' })), UsageError);
  });

  test('compile errors are reported as diagnostics (exit 1 through the CLI)', async (t) => {
    const dir = tempApp(t, { 'a.rvm': 'route GET /a {\n  response.ok(nope(1))\n}\n' });
    await assert.rejects(run(args([dir])), (e: unknown) => e instanceof DiagnosticError && e.diagnostics.length > 0 && e.diagnostics[0]!.file === 'a.rvm');
  });
});
