/**
 * The files `rvm new` writes: a working app (a route file with a GET and a validated POST, the
 * root middleware, its config, a .gitignore, a README) and a node:test file that starts it with
 * `rvm run` and requests its routes.
 */

/** One file of a new app: its path relative to the app folder, with `/` separators, and its text. */
export interface NewAppFile {
  path: string;
  text: string;
}

/** What the files depend on: the app's name (its folder's) and the runtime's package name. */
export interface NewAppOptions {
  name: string;
  /** The npm name of the runtime (package.json "name"), which the generated test resolves. */
  runtimePackage: string;
}

/** The version a new app starts at. */
export const NEW_APP_VERSION = '0.1.0';

const HELLO_RVM = `/// Says hello.
route GET /hello {
  response.ok({ message: 'Hello, world!' })
}

/// Greets someone by name. The body is checked before the handler runs: a missing, empty or
/// too long name is answered 422 with every failing field.
route POST /hello {
  validate {
    /// Who to greet.
    name: text @minLength(1) @maxLength(100)
  }
  response.ok({ message: "Hello, \${body.name}!" })
}
`;

const MIDDLEWARE_RVM = `/// Runs around every request, unmatched ones (404, 405) included: the route answers inside next().
/// rvm logs each request itself (method, path, status, time), so this does not.
middleware {
  next()
  // After next() the answer is known, and headers may still change.
  set_header('Cache-Control', 'no-store')
}
`;

const GITIGNORE = `# rvm's bytecode cache and data
.rvm/
# secrets (JWT keys, API keys): never commit them
.secrets/
.env
.env.*
# deploy bundles, built by rvm compile
*.rvmb
node_modules/
`;

function readme(o: NewAppOptions): string {
  return `# ${o.name}

An app for [rvm](https://www.npmjs.com/package/${o.runtimePackage}), made by \`rvm new\`.

| file | holds |
|---|---|
| \`hello.rvm\` | \`GET /hello\`, and \`POST /hello\` with a validated body |
| \`_middleware.rvm\` | the middleware every request runs through |
| \`rvm.config.json\` | the app's name and version (shown in the API reference), plugins and limits |
| \`test/app.test.mjs\` | starts the app and requests its routes |

## Run it

\`\`\`sh
rvm run ${o.name}         # from the folder above, or \`rvm run\` inside this one
curl http://127.0.0.1:3000/hello
curl -X POST http://127.0.0.1:3000/hello -H 'content-type: application/json' -d '{"name":"Ada"}'
\`\`\`

The API reference is at http://127.0.0.1:3000/_app/rest-api. \`rvm check\` reports every diagnostic.

## Tests

\`\`\`sh
node --test
\`\`\`

The test starts the app with \`rvm run\` on a free port. It finds the runtime in this order: the
\`RVM_CLI\` environment variable (the path of rvm's \`dist/tools/cli.js\`), then the package
\`${o.runtimePackage}\` installed for this folder (\`npm install -D ${o.runtimePackage}\` here, or in a folder
above), then the \`rvm\` command on your PATH (\`npm install -g ${o.runtimePackage}\`).
`;
}

function appTest(o: NewAppOptions): string {
  return `// Starts the app with \`rvm run\` on a free port and requests its routes: run with \`node --test\`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const APP = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The npm name of the runtime. */
const RUNTIME = ${JSON.stringify(o.runtimePackage)};

/** The rvm command: RVM_CLI, else the runtime installed for this folder, else \`rvm\` on PATH. */
function rvmCommand() {
  if (process.env.RVM_CLI) return [process.execPath, [process.env.RVM_CLI]];
  let manifest;
  try {
    manifest = createRequire(join(APP, 'package.json')).resolve(\`\${RUNTIME}/package.json\`);
  } catch {
    return ['rvm', []];
  }
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8'));
  return [process.execPath, [join(dirname(manifest), typeof bin === 'string' ? bin : bin.rvm)]];
}

let server;
let base;

before(async () => {
  const [command, args] = rvmCommand();
  server = spawn(command, [...args, 'run', APP, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  base = await new Promise((resolve, reject) => {
    let printed = '';
    server.stdout.setEncoding('utf8');
    server.stdout.on('data', (chunk) => {
      printed += chunk;
      const url = /App:\\s+(http:\\/\\/\\S+)/.exec(printed);
      if (url) resolve(url[1]);
    });
    server.on('error', (e) => reject(new Error(\`cannot start rvm (\${e.message}): see README.md, "Tests"\`)));
    server.on('exit', (code) => reject(new Error(\`rvm run exited with code \${code}:\\n\${printed}\`)));
  });
});

after(() => server?.kill());

test('GET /hello answers a message', async () => {
  const res = await fetch(\`\${base}/hello\`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assert.deepEqual(await res.json(), { message: 'Hello, world!' });
});

test('POST /hello greets the name it is sent', async () => {
  const res = await fetch(\`\${base}/hello\`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Ada' }) });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { message: 'Hello, Ada!' });
});

test('POST /hello without a name is refused: 422 validation_failed', async () => {
  const res = await fetch(\`\${base}/hello\`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(res.status, 422);
  const body = await res.json();
  assert.equal(body.code, 'validation_failed');
  assert.deepEqual(body.details.map((d) => d.field), ['name']);
});
`;
}

/** Every file of a new app, in the order they are written. */
export function newAppFiles(o: NewAppOptions): NewAppFile[] {
  return [
    { path: 'hello.rvm', text: HELLO_RVM },
    { path: '_middleware.rvm', text: MIDDLEWARE_RVM },
    { path: 'rvm.config.json', text: `${JSON.stringify({ name: o.name, version: NEW_APP_VERSION }, null, 2)}\n` },
    { path: '.gitignore', text: GITIGNORE },
    { path: 'README.md', text: readme(o) },
    { path: 'test/app.test.mjs', text: appTest(o) },
  ];
}
