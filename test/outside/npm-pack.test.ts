/**
 * Outside check: the runtime as a user installs it. `npm pack` of this repository is
 * installed into a fresh folder; there `npx rvm --version` prints the version of package.json,
 * and `npx rvm new app` then `npx rvm run app` serves the generated route; an app plugin that
 * imports the SDK by the package's name serves from its folder and from a bundle. The package
 * name is read from package.json, never assumed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../support/free-port.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
/** Pack, install and a first request together; a cold npm cache is the slow part. */
const OUTSIDE_TIMEOUT_MS = 120_000;
/**
 * `npx rvm`, told never to install a package of that name from the registry (without a TTY npx
 * would, and an unrelated "rvm" exists); `--` so that npx leaves `--version` to rvm.
 */
const NPX = ['--no', '--', 'rvm'];
/** How long `rvm run` may take to print its URL. */
const SERVE_TIMEOUT_MS = 20_000;

/**
 * The environment of the npm commands: without what `npm test` exports about this package, so
 * the fresh folder is its own project, not this one's.
 */
function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_(package|lifecycle)_/.test(key) || key === 'npm_config_local_prefix' || key === 'INIT_CWD' || key === 'NODE_TEST_CONTEXT') continue;
    env[key] = value;
  }
  return { ...env, RVM_DEBUG: '' };
}

function run(command: string, args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', env: npmEnv(), timeout: OUTSIDE_TIMEOUT_MS });
  return { status: r.status, stdout: r.stdout ?? '', stderr: `${r.stderr ?? ''}${r.error ? `\n${r.error.message}` : ''}` };
}

/** Resolves to the app URL `rvm run` prints. */
function appUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let printed = '';
    const timer = setTimeout(() => reject(new Error(`rvm run printed no URL in ${SERVE_TIMEOUT_MS} ms:\n${printed}`)), SERVE_TIMEOUT_MS);
    child.stdout!.setEncoding('utf8');
    child.stderr!.setEncoding('utf8');
    const read = (chunk: string): void => {
      printed += chunk;
      const url = /App:\s+(http:\/\/\S+)/.exec(printed);
      if (url) {
        clearTimeout(timer);
        resolve(url[1]!);
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`rvm run exited with ${code}:\n${printed}`));
    });
  });
}

describe(`npm pack of ${PKG.name}, installed in a fresh folder`, { timeout: OUTSIDE_TIMEOUT_MS }, () => {
  let tmp: string;
  let project: string;
  const servers: ChildProcess[] = [];

  /**
   * Starts `rvm run ...args` in the project on a free port and resolves to its URL: through npx as
   * a user first would, or straight through the bin npm installed (node_modules/.bin/rvm, where npx
   * leads too), without an npm process per server.
   */
  async function serve(args: string[], via: 'npx' | 'bin' = 'npx'): Promise<string> {
    const port = await freePort();
    const [command, argv] = via === 'npx' ? ['npx', [...NPX, 'run']] : [installedBin(), ['run']];
    const child = spawn(command, [...argv, ...args, '--port', String(port)], {
      cwd: project,
      env: npmEnv(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    servers.push(child);
    const url = await appUrl(child);
    assert.equal(url, `http://127.0.0.1:${port}`);
    return url;
  }

  /** The `rvm` command npm installed in the project. */
  const installedBin = () => join(project, 'node_modules', '.bin', 'rvm');

  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'rvm-pack-'));
    project = join(tmp, 'project');
    mkdirSync(project);
    // dist/ is built by `npm test` before any test runs: the prepare script need not run again.
    const packed = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], ROOT);
    assert.equal(packed.status, 0, packed.stderr);
    const tarball = join(tmp, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);
    writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'fresh-project', private: true }, null, 2)}\n`);
    // Offline, from the cache `npm ci` filled. Without install scripts: better-sqlite3 has no
    // prebuilt binary in reach (its prebuilds are on GitHub), so its script would compile SQLite
    // for ~90 s of CPU. The check is about this package's own files, so the binary this checkout
    // built for the same version, node and platform goes in its place. (argon2's script only checks
    // for the prebuild its package carries, which node-gyp-build finds when argon2 loads.)
    const installed = run('npm', ['install', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', tarball], project);
    assert.equal(installed.status, 0, installed.stderr);
    const version = (root: string) => (JSON.parse(readFileSync(join(root, 'node_modules/better-sqlite3/package.json'), 'utf8')) as { version: string }).version;
    assert.equal(version(project), version(ROOT), 'the installed better-sqlite3 is the version this checkout built');
    cpSync(
      join(ROOT, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'),
      join(project, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'),
    );
  });

  after(async () => {
    for (const server of servers) {
      if (server.pid === undefined || server.exitCode !== null) continue;
      const exited = new Promise((resolve) => server.once('exit', resolve));
      // npx runs rvm as its child: the whole group goes.
      process.kill(-server.pid, 'SIGTERM');
      await exited;
    }
    rmSync(tmp, { recursive: true, force: true });
  });

  test('npx rvm --version prints the version of package.json', () => {
    const r = run('npx', [...NPX, '--version'], project);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `rvm ${PKG.version}\n`);
  });

  test('npx rvm new app, then npx rvm run app serves GET /hello', async () => {
    const made = run('npx', [...NPX, 'new', 'app'], project);
    assert.equal(made.status, 0, made.stderr);
    const url = await serve(['app']);
    const res = await fetch(`${url}/hello`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { message: 'Hello, world!' });
  });

  test(`a plugin importing ${PKG.name}/sdk serves from its folder and from a bundle`, async () => {
    const app = join(project, 'plugapp');
    mkdirSync(join(app, 'plugins'), { recursive: true });
    writeFileSync(join(app, 'rvm.config.json'), JSON.stringify({ name: 'plugapp', plugins: ['./plugins/shout.mjs'] }));
    writeFileSync(
      join(app, 'plugins', 'shout.mjs'),
      `import { definePlugin, toText } from '${PKG.name}/sdk';\n` +
        `export default definePlugin({ name: 'shout', version: '1.0.0', setup(rvm) {\n` +
        `  rvm.native('shout', (ctx, x) => toText(x).toUpperCase() + '!', { params: [{ name: 'x', type: 'text' }], returns: 'text', doc: 'Shouts.' });\n` +
        `} });\n`,
    );
    writeFileSync(join(app, 'shout.rvm'), "route GET /shout {\n  response.ok({ said: shout('hi') })\n}\n");
    const fromFolder = await serve(['plugapp'], 'bin');
    assert.deepEqual(await (await fetch(`${fromFolder}/shout`)).json(), { said: 'HI!' });
    const compiled = run(installedBin(), ['compile', 'plugapp', '-o', 'plugapp.rvmb'], project);
    assert.equal(compiled.status, 0, compiled.stderr);
    const fromBundle = await serve(['plugapp.rvmb', '--prod'], 'bin');
    assert.deepEqual(await (await fetch(`${fromBundle}/shout`)).json(), { said: 'HI!' });
  });
});
