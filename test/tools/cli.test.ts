import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readBundle } from '../../vm/bytecode/bundle.js';
import { tempApp } from '../support/temp-app.js';
import { rvm, rvmProcess, type RvmResult } from '../support/rvm-command.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(ROOT, 'dist', 'tools', 'cli.js');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
/** How long a spawned `rvm run` may take to print its URL or to shut down. */
const SERVER_TIMEOUT_MS = 15_000;

/** Asserts a user error: the exit code, nothing on stdout, exactly one line on stderr, no stack trace. */
function oneLineError(r: RvmResult, status: number): string {
  assert.equal(r.status, status, `exit code; stderr: ${r.stderr}`);
  assert.equal(r.stdout, '');
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0]!, /^rvm: /);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
  return lines[0]!;
}

describe('rvm: help, version and usage errors', () => {
  test('--version, -v and version print the package version', async () => {
    for (const flag of ['--version', '-v', 'version']) {
      const r = await rvm([flag]);
      assert.equal(r.status, 0);
      assert.equal(r.stdout, `rvm ${VERSION}\n`);
    }
  });

  test('help lists every command', async () => {
    for (const args of [['help'], ['--help'], []]) {
      const r = await rvm(args);
      assert.equal(r.status, 0);
      for (const name of ['run', 'compile', 'check', 'routes', 'disasm', 'help']) assert.match(r.stdout, new RegExp(`^  ${name}\\b`, 'm'), name);
    }
  });

  test('help COMMAND and COMMAND --help show its options', async () => {
    for (const args of [
      ['help', 'run'],
      ['run', '--help'],
      ['run', '-h'],
    ]) {
      const r = await rvm(args);
      assert.equal(r.status, 0);
      assert.match(r.stdout, /^Usage: rvm run/);
      for (const flag of ['--port', '--host', '--prod', '--workers']) assert.ok(r.stdout.includes(flag), flag);
    }
    assert.match((await rvm(['help', 'compile'])).stdout, /-o, --output FILE\.rvmb/);
  });

  test('an unknown command exits 2 with a suggestion', async () => {
    assert.equal(oneLineError(await rvm(['rnu']), 2), "rvm: unknown command 'rnu' (did you mean 'run'?)");
    assert.match(oneLineError(await rvm(['chek', 'x']), 2), /did you mean 'check'\?/);
    assert.match(oneLineError(await rvm(['xyzzy']), 2), /unknown command 'xyzzy'/);
    assert.match(oneLineError(await rvm(['help', 'xyzzy']), 2), /unknown command 'xyzzy'/);
    assert.equal(oneLineError(rvmProcess(['rnu']), 2), "rvm: unknown command 'rnu' (did you mean 'run'?)", 'the binary exits 2 too');
  });

  test('an unknown flag exits 2 naming it', async () => {
    assert.match(oneLineError(await rvm(['run', '--prot', '1']), 2), /unknown flag '--prot'.*did you mean '--port'/);
    assert.match(oneLineError(await rvm(['check', '--fast', 'app']), 2), /unknown flag '--fast'/);
    assert.match(oneLineError(await rvm(['--frobnicate']), 2), /unknown flag '--frobnicate'/);
    assert.match(oneLineError(await rvm(['run', '--prod=yes']), 2), /takes no value/);
  });

  test('a missing value, a bad port and bad worker counts exit 2', async () => {
    assert.match(oneLineError(await rvm(['run', '--port']), 2), /'--port' needs a value/);
    assert.match(oneLineError(await rvm(['run', '--port', '70000']), 2), /port/);
    assert.match(oneLineError(await rvm(['run', '--port=abc']), 2), /port/);
    assert.match(oneLineError(await rvm(['run'], { PORT: 'eighty' }), 2), /PORT/);
    assert.match(oneLineError(await rvm(['run', '--workers', '0']), 2), /--workers/);
    assert.match(oneLineError(await rvm(['run', '--workers', 'many']), 2), /--workers/);
  });

  test('missing and extra positional arguments exit 2', async () => {
    assert.match(oneLineError(await rvm(['compile']), 2), /needs DIR/);
    assert.match(oneLineError(await rvm(['disasm']), 2), /needs FILE/);
    assert.match(oneLineError(await rvm(['routes', 'a', 'b']), 2), /unexpected argument 'b'/);
    assert.match(oneLineError(await rvm(['compile', join(ROOT, 'examples')]), 2), /-o/);
  });

  test('check, routes, openapi and fuzz default to the current folder, as run does', async () => {
    const app = mkdtempSync(join(tmpdir(), 'rvm-cwd-'));
    try {
      writeFileSync(join(app, 'a.rvm'), 'route GET /here { response.ok({ here: true }) }\n');
      // The binary, started in the app: the only way to give a command its own working directory.
      const inApp = (args: string[]) => rvmProcess(args, { cwd: app });
      assert.equal(inApp(['check']).status, 0);
      assert.match(inApp(['routes']).stdout, /GET\s+\/here/);
      assert.match(inApp(['openapi']).stdout, /"\/here"/);
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });

  test('a missing folder or file exits 1 with one line', async () => {
    assert.match(oneLineError(await rvm(['check', 'no/such/app']), 1), /no such folder: no\/such\/app/);
    assert.match(oneLineError(await rvm(['routes', 'no/such/app']), 1), /no such folder/);
    assert.match(oneLineError(await rvm(['compile', 'no/such/app', '-o', 'x.rvmb']), 1), /no such folder/);
    assert.match(oneLineError(await rvm(['disasm', 'no/such/file.rvm']), 1), /no such file/);
    assert.match(oneLineError(await rvm(['run', 'no/such/app']), 1), /no such app folder or bundle/);
    assert.match(oneLineError(rvmProcess(['check', 'no/such/app']), 1), /no such folder/, 'the binary exits 1 too');
  });
});

describe('rvm on an app', () => {
  let dir = '';
  let app = '';
  let broken = '';

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-cli-'));
    app = join(dir, 'app');
    mkdirSync(join(app, 'api'), { recursive: true });
    writeFileSync(join(app, 'index.rvm'), "route GET / {\n  response.ok({ hello: 'world' })\n}\n");
    writeFileSync(
      join(app, 'api', 'users.rvm'),
      [
        '/// Fetch a user',
        'route GET /users/:id {',
        "  user = { id: params.id, name: 'Ada' }",
        '  response.ok(user)',
        '}',
        '',
        'fn double(x) {',
        '  return x * 2',
        '}',
        '',
        'route POST /users {',
        '  response.created({ twice: double(2) })',
        '}',
        '',
      ].join('\n'),
    );
    broken = join(dir, 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, 'bad.rvm'), 'route GET /x {\n  x = (1 +\n}\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('check: a clean app exits 0 with a summary', async () => {
    const r = await rvm(['check', app]);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^ok: .*2 files \(3 routes\)$/m);
  });

  test('check: a guard the app has not configured is a located warning (its requests would answer 500), gone once configured', async () => {
    const guarded = join(dir, 'guarded');
    mkdirSync(guarded, { recursive: true });
    writeFileSync(
      join(guarded, 'me.rvm'),
      'route GET /me {\n  guard auth\n  response.ok(auth_user())\n}\nroute GET /partner {\n  guard api_key\n  response.ok({})\n}\nroute GET /again {\n  guard auth\n  response.ok({})\n}\n',
    );
    const r = await rvm(['check', guarded], { JWT_SECRET: '', API_KEYS: '' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^me\.rvm:2:9: warning W_NOT_CONFIGURED: authentication is not configured: set the JWT_SECRET/m);
    assert.match(r.stdout, /^me\.rvm:6:9: warning W_NOT_CONFIGURED: API keys are not configured/m);
    // Once per guard, at its first use: the second `guard auth` adds nothing.
    assert.match(r.stdout, /2 warnings/);
    const configured = await rvm(['check', guarded], { JWT_SECRET: 'a-key-of-at-least-32-bytes-for-the-test', API_KEYS: 'k1' });
    assert.doesNotMatch(configured.stdout, /W_NOT_CONFIGURED/);
  });

  test('check: a guard use of the wrong count is reported once, arities read as sentences, a duplicate route names both places', async () => {
    const app2 = join(dir, 'diagnostics');
    mkdirSync(app2, { recursive: true });
    writeFileSync(join(app2, 'a.rvm'), "route GET /a {\n  guard rate_limit(5)\n  response.ok({ n: len('a', 'b') })\n}\nroute GET /b { response.ok({}) }\n");
    writeFileSync(join(app2, 'b.rvm'), 'route GET /b { response.ok({}) }\n');
    const r = await rvm(['check', app2]);
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /^a\.rvm:2:9: error E_ARITY: guard 'rate_limit' takes 2 arguments, got 1$/m);
    assert.doesNotMatch(r.stdout, /E_GUARD_ARGS/, 'not reported a second time as bad arguments');
    assert.match(r.stdout, /^a\.rvm:3:\d+: error E_ARITY: 'len' takes 1 argument, got 2$/m);
    assert.match(r.stdout, /^b\.rvm:1:1: error E_DUPLICATE_ROUTE: duplicate route: GET \/b has the same shape as GET \/b \(first at a\.rvm:5\)$/m);
  });

  test('check: a broken app prints located diagnostics and exits 1', async () => {
    const r = await rvm(['check', broken]);
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /^bad\.rvm:\d+:\d+: error E_[A-Z_]+: /m);
    assert.match(r.stdout, /^failed: [1-9]\d* errors?/m);
  });

  test('routes: a table of method, path, guards and file:line', async () => {
    const r = await rvm(['routes', app]);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.split('\n');
    assert.match(lines[0]!, /^METHOD\s+PATH\s+GUARDS\s+SOURCE$/);
    assert.match(r.stdout, /^GET\s+\/users\/:id\s+-\s+api\/users\.rvm:2$/m);
    assert.match(r.stdout, /^POST\s+\/users\s+-\s+api\/users\.rvm:11$/m);
    assert.match(r.stdout, /^GET\s+\/\s+-\s+index\.rvm:1$/m);
  });

  test('routes, compile and run on a broken app print diagnostics on stderr and exit 1', async () => {
    for (const args of [
      ['routes', broken],
      ['compile', broken, '-o', join(dir, 'never.rvmb')],
      ['run', broken, '--port', '0'],
    ]) {
      const r = await rvm(args);
      assert.equal(r.status, 1);
      assert.match(r.stderr, /bad\.rvm:\d+:\d+: error E_[A-Z_]+/);
      assert.doesNotMatch(r.stderr, /internal error/);
    }
    assert.equal(existsSync(join(dir, 'never.rvmb')), false);
  });

  test('compile writes a bundle that reads back; disasm lists it', async () => {
    const out = join(dir, 'app.rvmb');
    const r = await rvm(['compile', app, '-o', out]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /wrote .*app\.rvmb \(2 modules, 3 routes/);
    const bundle = readBundle(out);
    assert.deepEqual(bundle.modules.map((m) => m.file).sort(), ['api/users.rvm', 'index.rvm']);
    const d = await rvm(['disasm', out]);
    assert.equal(d.status, 0, d.stderr);
    assert.match(d.stdout, /== route GET \/users\/:id ==/);
    assert.match(d.stdout, /== fn double ==/);
    assert.match(d.stdout, /^\d{4} +(\d+|\|) {2}CALL +@0 response\.ok\/1/m);
  });

  test('disasm: a source file, with its source lines', async () => {
    const r = await rvm(['disasm', join(app, 'api', 'users.rvm')]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^ {12}; return x \* 2$/m);
    assert.match(r.stdout, /^0000 +8 {2}LOAD_LOCAL +slot 0$/m);
  });

  test('disasm: a cache artefact finds its source', async () => {
    assert.equal((await rvm(['routes', app])).status, 0);
    const artefact = join(app, '.rvm', 'cache', 'api', 'users.rvm.rvmc');
    assert.ok(existsSync(artefact), 'routes fills the cache');
    const r = await rvm(['disasm', artefact]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^; api\/users\.rvm /);
    assert.match(r.stdout, /^ {12}; return x \* 2$/m);
  });

  test('a damaged or foreign bundle is refused with one line naming it', async () => {
    const good = readFileSync(join(dir, 'app.rvmb'));
    const damaged = join(dir, 'damaged.rvmb');
    writeFileSync(damaged, good.subarray(0, good.length - 10));
    for (const args of [
      ['disasm', damaged],
      ['run', damaged, '--port', '0'],
    ]) {
      const line = oneLineError(await rvm(args), 1);
      assert.ok(line.includes('damaged.rvmb'), line);
    }
    const foreign = join(dir, 'foreign.rvmb');
    writeFileSync(foreign, 'hello');
    assert.ok(oneLineError(await rvm(['disasm', foreign]), 1).includes('foreign.rvmb'));
  });

  for (const which of ['folder', 'bundle'] as const) {
    test(`run serves the ${which}, prints both URLs and stops on SIGTERM`, async () => {
      const target = which === 'folder' ? app : join(dir, 'app.rvmb');
      const child = spawn(process.execPath, [CLI, 'run', target, '--port', '0', '--prod'], { cwd: ROOT, env: { ...process.env, HOST: '127.0.0.1' } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      try {
        const started = Date.now();
        while (!/API reference:/.test(stdout)) {
          if (child.exitCode !== null || Date.now() - started > SERVER_TIMEOUT_MS) assert.fail(`no URL printed; stdout: ${stdout} stderr: ${stderr}`);
          await new Promise((r) => setTimeout(r, 50));
        }
        const url = /App:\s+(http:\/\/\S+)/.exec(stdout)?.[1];
        assert.ok(url, stdout);
        // --prod without "reference" in rvm.config.json serves no reference: no URL that answers 404.
        assert.match(stdout, /API reference: off in production/);
        assert.match(stdout, /Store: +in this process/, 'rvm run says which store it uses');
        assert.doesNotMatch(stdout, /_app\/rest-api/);
        assert.equal((await fetch(`${url}/_app/rest-api`)).status, 404);
        const res = await fetch(`${url}/users/42`);
        assert.equal(res.status, 200);
        assert.deepEqual(await res.json(), { id: '42', name: 'Ada' });
        if (which === 'folder') assert.match(readFileSync(join(app, '.gitignore'), 'utf8'), /^\.rvm\/$/m);
      } finally {
        child.kill('SIGTERM');
      }
      const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), SERVER_TIMEOUT_MS).unref());
      assert.equal(await Promise.race([exited, timeout]), 0, stderr);
    });
  }

  test('run --workers 2 serves from a cluster and shuts every worker down', async () => {
    const child = spawn(process.execPath, [CLI, 'run', app, '--port', '0', '--prod', '--workers', '2'], { cwd: ROOT });
    let stdout = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const started = Date.now();
      while (!/API reference:/.test(stdout)) {
        if (child.exitCode !== null || Date.now() - started > SERVER_TIMEOUT_MS) assert.fail(`no URL printed; stdout: ${stdout}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.match(stdout, /2 workers/);
      const url = /App:\s+(http:\/\/\S+)/.exec(stdout)?.[1];
      for (let i = 0; i < 4; i++) assert.equal((await fetch(`${url}/`)).status, 200);
    } finally {
      child.kill('SIGINT');
    }
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), SERVER_TIMEOUT_MS).unref());
    assert.equal(await Promise.race([exited, timeout]), 0);
  });

  test('a port already in use is one line and exit 1', async () => {
    const { createServer } = await import('node:net');
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      // A start that fails closes the app it loaded: nothing is left serving in this process.
      assert.match(oneLineError(await rvm(['run', app, '--port', String(port), '--prod']), 1), /already in use/);
    } finally {
      blocker.close();
    }
  });

  test('run --prod refuses passwords hashed at test cost, in one process and before forking workers', async (t) => {
    const testCost = tempApp(t, { 'app.rvm': 'route GET / { response.ok({}) }\n', 'rvm.config.json': '{"passwords": {"cost": "test"}}' });
    for (const workers of [[], ['--workers', '2']]) {
      assert.match(oneLineError(await rvm(['run', testCost, '--prod', '--port', '0', ...workers]), 1), /"passwords": \{"cost": "test"\} .*--prod refuses it/);
    }
  });

  test('run --workers 2 with records in memory stops before forking, with one line', async (t) => {
    const app = tempApp(t, { 'app.rvm': 'type Note { title: text }\nroute GET / { response.ok(Note.count({})) }\n' });
    const line = oneLineError(await rvm(['run', app, '--port', '0', '--workers', '2'], { SQLITE_PATH: ':memory:' }), 1);
    assert.match(line, /:memory: cannot be shared by 2 workers/);
  });
});

describe('rvm run: .gitignore', () => {
  test('ensureGitignore adds .rvm/ and .secrets/ once, keeping what is there', async () => {
    const { ensureGitignore } = await import('../../tools/commands/run.js');
    const dir = mkdtempSync(join(tmpdir(), 'rvm-gitignore-'));
    try {
      ensureGitignore(dir);
      assert.equal(readFileSync(join(dir, '.gitignore'), 'utf8'), '.rvm/\n.secrets/\n');
      writeFileSync(join(dir, '.gitignore'), 'node_modules\n/.rvm');
      ensureGitignore(dir);
      ensureGitignore(dir);
      assert.equal(readFileSync(join(dir, '.gitignore'), 'utf8'), 'node_modules\n/.rvm\n.secrets/\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
