/**
 * `rvm compile` of an app with plugins, and the bundle served: the bundle records each plugin
 * (name, version, spec, where to find it from the bundle's folder) and the server loads them
 * again, refusing a missing or different plugin with a coded error naming it.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PluginLoadError } from '../../vm/host/registry.js';
import { readBundle } from '../../vm/bytecode/bundle.js';
import { loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { rvm } from '../support/rvm-command.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(ROOT, 'dist', 'tools', 'cli.js');
/** How long a spawned `rvm run` may take to print its URL. */
const SERVER_TIMEOUT_MS = 15_000;

/** A path plugin with no imports, of the given name and version. */
const greetPlugin = (name: string, version: string): string => `export default {
  name: '${name}',
  version: '${version}',
  setup(rvm) {
    rvm.native('greet', (_ctx, who) => 'hello, ' + who, { params: [{ name: 'who', type: 'text' }], returns: 'text', doc: 'A greeting.' });
  },
};
`;

const SHOUT_PLUGIN = `export default {
  name: 'shout',
  version: '2.0.0',
  setup(rvm) {
    rvm.native('shout', (_ctx, text) => String(text).toUpperCase(), { params: [{ name: 'text', type: 'text' }], returns: 'text', doc: 'Upper case.' });
  },
};
`;

const ROUTE = `route GET /hello {
  response.ok({ greeting: greet('ada'), loud: shout('hi') })
}
`;

function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** The package plugin, installed in `root/node_modules`: found from `root/src/app` and from `root/deploy`. */
function installShout(root: string): void {
  write(join(root, 'node_modules', 'rvm-plugin-shout', 'package.json'), JSON.stringify({ name: 'rvm-plugin-shout', type: 'module', exports: './index.js' }));
  write(join(root, 'node_modules', 'rvm-plugin-shout', 'index.js'), SHOUT_PLUGIN);
}

async function rejectsWith(promise: Promise<unknown>, code: string, ...mentions: string[]): Promise<void> {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof PluginLoadError, String(e));
    assert.equal(e.code, code, e.message);
    for (const m of mentions) assert.ok(e.message.includes(m), `names ${m}: ${e.message}`);
    return true;
  });
}

describe('rvm compile: a bundle carries the app plugins', () => {
  let dir = '';
  let bundle = '';

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-compile-plugins-'));
    // Each layout gets its own folder under dir, so no layout finds another's node_modules.
    const main = join(dir, 'main');
    const app = join(main, 'src', 'app');
    write(join(app, 'rvm.config.json'), JSON.stringify({ plugins: ['./plugins/greet.mjs', 'rvm-plugin-shout'] }));
    write(join(app, 'plugins', 'greet.mjs'), greetPlugin('greet', '1.0.0'));
    write(join(app, 'hello.rvm'), ROUTE);
    installShout(main);
    // The bundle goes to another folder than the app: path plugins are rebased onto it.
    bundle = join(main, 'deploy', 'app.rvmb');
    mkdirSync(dirname(bundle));
    const r = await rvm(['compile', app, '-o', bundle]);
    assert.equal(r.status, 0, r.stderr);
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  /** A copy of the bundle in a fresh folder `name/deploy/`, for layouts that lack or change a plugin. */
  function copyBundle(name: string): string {
    const copy = join(dir, name, 'deploy', 'app.rvmb');
    mkdirSync(dirname(copy), { recursive: true });
    cpSync(bundle, copy);
    return copy;
  }

  test('the bundle records each plugin: spec, name, version, and where to find it from the bundle folder', () => {
    assert.deepStrictEqual(readBundle(bundle).plugins, [
      { spec: './plugins/greet.mjs', name: 'greet', version: '1.0.0', from: '../src/app/plugins/greet.mjs' },
      { spec: 'rvm-plugin-shout', name: 'shout', version: '2.0.0', from: 'rvm-plugin-shout' },
    ]);
  });

  test('the bundle serves the plugins natives (inject)', async () => {
    const app = await loadApp(bundle, { logger: captureLogger() });
    try {
      const res = await inject(app, { url: '/hello' });
      assert.equal(res.status, 200, res.body.toString());
      assert.deepEqual(res.json(), { greeting: 'hello, ada', loud: 'HI' });
    } finally {
      await app.close();
    }
  });

  test('rvm run BUNDLE --prod serves the plugins natives over HTTP', async () => {
    const child = spawn(process.execPath, [CLI, 'run', bundle, '--port', '0', '--prod'], { cwd: ROOT, env: { ...process.env, HOST: '127.0.0.1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const started = Date.now();
      while (!/App:\s+http/.test(stdout)) {
        if (child.exitCode !== null || Date.now() - started > SERVER_TIMEOUT_MS) assert.fail(`no URL printed; stdout: ${stdout} stderr: ${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const url = /App:\s+(http:\/\/\S+)/.exec(stdout)![1];
      const res = await fetch(`${url}/hello`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { greeting: 'hello, ada', loud: 'HI' });
    } finally {
      child.kill('SIGTERM');
    }
    await exited;
  });

  test('moved with its plugins in the same layout, the bundle still serves: the record is relative', async () => {
    const copy = copyBundle('moved');
    write(join(dir, 'moved', 'src', 'app', 'plugins', 'greet.mjs'), greetPlugin('greet', '1.0.0'));
    installShout(join(dir, 'moved'));
    const app = await loadApp(copy, { logger: captureLogger() });
    try {
      assert.deepEqual((await inject(app, { url: '/hello' })).json(), { greeting: 'hello, ada', loud: 'HI' });
    } finally {
      await app.close();
    }
  });

  test('a missing path plugin is E_PLUGIN_NOT_FOUND naming it and where it was expected, never E_UNKNOWN_FUNCTION', async () => {
    const copy = copyBundle('lonely');
    await rejectsWith(loadApp(copy, { logger: captureLogger() }), 'E_PLUGIN_NOT_FOUND', "'greet'", '1.0.0', '../src/app/plugins/greet.mjs', copy);
    const r = await rvm(['run', copy, '--prod', '--port', '0']);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /^rvm: plugin 'greet' .* was not found/);
    assert.doesNotMatch(r.stderr, /E_UNKNOWN_FUNCTION|internal error/);
  });

  test('a missing package plugin is E_PLUGIN_NOT_FOUND naming it', async () => {
    const copy = copyBundle('no-packages');
    write(join(dir, 'no-packages', 'src', 'app', 'plugins', 'greet.mjs'), greetPlugin('greet', '1.0.0'));
    await rejectsWith(loadApp(copy, { logger: captureLogger() }), 'E_PLUGIN_NOT_FOUND', "'shout'", 'rvm-plugin-shout');
  });

  test('a plugin of another version than the bundle was compiled against is E_PLUGIN_MISMATCH naming both versions', async () => {
    const copy = copyBundle('upgraded');
    write(join(dir, 'upgraded', 'src', 'app', 'plugins', 'greet.mjs'), greetPlugin('greet', '1.1.0'));
    installShout(join(dir, 'upgraded'));
    await rejectsWith(loadApp(copy, { logger: captureLogger() }), 'E_PLUGIN_MISMATCH', "'greet'", 'greet 1.0.0', 'greet 1.1.0');
    const r = await rvm(['run', copy, '--prod', '--port', '0', '--workers', '2']);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /^rvm: plugin 'greet' of bundle .* does not match: compiled against greet 1\.0\.0/);
  });

  test('another plugin at the recorded place is E_PLUGIN_MISMATCH naming both', async () => {
    const copy = copyBundle('renamed');
    write(join(dir, 'renamed', 'src', 'app', 'plugins', 'greet.mjs'), greetPlugin('welcome', '1.0.0'));
    installShout(join(dir, 'renamed'));
    await rejectsWith(loadApp(copy, { logger: captureLogger() }), 'E_PLUGIN_MISMATCH', 'greet 1.0.0', 'welcome 1.0.0');
  });
});
