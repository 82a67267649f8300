/**
 * Plugins import the SDK by the runtime's package name, `rvm-runtime/sdk`, and get the runtime
 * that loads them: from an app folder with no node_modules, from a bundle compiled from it, and
 * even when the app installed another copy of the package.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { RUNTIME_PACKAGE } from '../../vm/host/sdk-hook.js';
import { resolvePlugins } from '../../vm/host/loader.js';
import * as sdk from '../../plugins/sdk.js';
import { loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(ROOT, 'dist', 'tools', 'cli.js');
/** How long a spawned `rvm run` may take to print its URL. */
const SERVER_TIMEOUT_MS = 15_000;

/** A plugin written as a user writes one: the SDK by package name, RvmError thrown from a native. */
const PLUGIN = `import { definePlugin, RvmError, toText } from 'rvm-runtime/sdk';
import * as sdk from 'rvm-runtime/sdk';

export { sdk };

export default definePlugin({
  name: 'greetings',
  version: '1.0.0',
  setup(rvm) {
    rvm.native('greet', (_ctx, who) => {
      if (who === '') throw new RvmError('nobody to greet', 'nobody');
      return 'Hello, ' + toText(who) + '!';
    }, { params: [{ name: 'who', type: 'text' }], returns: 'text', doc: 'A greeting.' });
  },
});
`;

const ROUTE = `route GET /greet/:who {
  response.ok({ text: greet(params.who) })
}

route GET /nobody {
  try {
    greet('')
  } catch err {
    response.ok({ code: err.code })
  }
}
`;

function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

describe('plugins import the SDK by package name', () => {
  let dir = '';
  let app = '';

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-sdk-import-'));
    app = join(dir, 'app');
    write(join(app, 'rvm.config.json'), JSON.stringify({ plugins: ['./plugins/greetings.mjs'] }));
    write(join(app, 'plugins', 'greetings.mjs'), PLUGIN);
    write(join(app, 'greet.rvm'), ROUTE);
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  test('the package name in package.json is the one the hook maps', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; bin: Record<string, string>; exports: Record<string, string> };
    assert.equal(pkg.name, RUNTIME_PACKAGE);
    assert.equal(pkg.bin.rvm, 'dist/tools/cli.js');
    assert.equal(pkg.exports['./sdk'], './dist/plugins/sdk.js');
  });

  test("from an app folder with no node_modules, the plugin gets this runtime's SDK module itself", async () => {
    const [definition] = await resolvePlugins(['./plugins/greetings.mjs'], app);
    assert.equal(definition!.name, 'greetings');
    const mod = (await import(pathToFileURL(join(app, 'plugins', 'greetings.mjs')).href)) as { sdk: typeof sdk };
    assert.equal(mod.sdk.RvmError, sdk.RvmError, 'one RvmError class: the runtime recognises what the plugin throws');
    assert.equal(mod.sdk.HALT, sdk.HALT);
  });

  test('the app folder serves the plugin native, and its RvmError reaches try/catch with its code', async () => {
    const served = await loadApp(app, { cache: false, logger: captureLogger() });
    try {
      assert.deepEqual((await inject(served, { url: '/greet/ada' })).json(), { text: 'Hello, ada!' });
      assert.deepEqual((await inject(served, { url: '/nobody' })).json(), { code: 'nobody' });
    } finally {
      await served.close();
    }
  });

  test('a bundle compiled from it serves the plugin native (rvm compile, then rvm run BUNDLE in a fresh process)', async () => {
    const bundle = join(dir, 'deploy', 'app.rvmb');
    mkdirSync(dirname(bundle), { recursive: true });
    const compiled = spawnSync(process.execPath, [CLI, 'compile', app, '-o', bundle], { cwd: dir, encoding: 'utf8' });
    assert.equal(compiled.status, 0, compiled.stderr);
    const served = await loadApp(bundle, { logger: captureLogger() });
    try {
      assert.deepEqual((await inject(served, { url: '/greet/bo' })).json(), { text: 'Hello, bo!' });
    } finally {
      await served.close();
    }
    const child = spawn(process.execPath, [CLI, 'run', bundle, '--port', '0', '--prod'], { cwd: dir, env: { ...process.env, HOST: '127.0.0.1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    try {
      const started = Date.now();
      while (!/App:\s+http/.test(stdout)) {
        if (child.exitCode !== null || Date.now() - started > SERVER_TIMEOUT_MS) assert.fail(`no URL printed; stdout: ${stdout} stderr: ${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const url = /App:\s+(http:\/\/\S+)/.exec(stdout)![1];
      const res = await fetch(`${url}/nobody`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { code: 'nobody' });
    } finally {
      child.kill('SIGTERM');
    }
    await exited;
  });

  test('an app that installed another rvm-runtime still gives its plugins the runtime that loads them', async () => {
    const other = join(dir, 'other');
    write(
      join(other, 'node_modules', 'rvm-runtime', 'package.json'),
      JSON.stringify({ name: 'rvm-runtime', type: 'module', exports: { './sdk': './sdk.js' } }),
    );
    write(join(other, 'node_modules', 'rvm-runtime', 'sdk.js'), `export const impostor = true;\nexport function definePlugin(d) { return d; }\n`);
    write(join(other, 'plugins', 'greetings.mjs'), PLUGIN);
    await resolvePlugins(['./plugins/greetings.mjs'], other);
    const mod = (await import(pathToFileURL(join(other, 'plugins', 'greetings.mjs')).href)) as { sdk: Record<string, unknown> };
    assert.equal(mod.sdk.impostor, undefined);
    assert.equal(mod.sdk.RvmError, sdk.RvmError);
  });

  test('a subpath the runtime does not export stays unreachable', async () => {
    const other = join(dir, 'private');
    write(join(other, 'plugins', 'sneaky.mjs'), `import 'rvm-runtime/vm/interpreter.js';\nexport default { name: 'sneaky', version: '1', setup() {} };\n`);
    await assert.rejects(resolvePlugins(['./plugins/sneaky.mjs'], other), (e: unknown) => {
      assert.equal((e as { code?: string }).code, 'E_PLUGIN_INVALID');
      assert.match((e as Error).message, /sneaky\.mjs' failed to load: .*not exported|ERR_PACKAGE_PATH_NOT_EXPORTED|subpath/i);
      return true;
    });
  });

  test('a plugin written against a name the SDK withdrew fails to load saying what to use instead', async () => {
    const old = join(dir, 'old');
    write(
      join(old, 'plugins', 'old.mjs'),
      `import { CPU_BUDGET_MS } from 'rvm-runtime/sdk';\nexport default { name: 'old', version: '1', setup() { void CPU_BUDGET_MS; } };\n`,
    );
    await assert.rejects(resolvePlugins(['./plugins/old.mjs'], old), (e: unknown) => {
      assert.equal((e as { code?: string }).code, 'E_PLUGIN_INVALID');
      assert.match((e as Error).message, /old\.mjs' failed to load: .*CPU_BUDGET_MS.*rvm-runtime\/sdk no longer exports CPU_BUDGET_MS: .*ctx\.budget/);
      return true;
    });
  });

  test('a plugin that threads answers with andThen, which the SDK withdrew, is told to write an async function', async () => {
    const old = join(dir, 'answers');
    write(
      join(old, 'plugins', 'answers.mjs'),
      `import { andThen } from 'rvm-runtime/sdk';\nexport default { name: 'answers', version: '1', setup() { void andThen; } };\n`,
    );
    await assert.rejects(resolvePlugins(['./plugins/answers.mjs'], old), (e: unknown) => {
      assert.equal((e as { code?: string }).code, 'E_PLUGIN_INVALID');
      assert.match((e as Error).message, /answers\.mjs' failed to load: .*rvm-runtime\/sdk no longer exports andThen: .*async function/);
      return true;
    });
  });
});
