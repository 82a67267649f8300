/**
 * The secrets plugin end to end: an app with a `.secrets/` folder and a controlled environment.
 * Secret values never reach logs, JSON bodies or dev error pages; names that would leave
 * `.secrets/` are refused with their codes.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { App } from '../../vm/runtime/app.js';
import { loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger, type CaptureLogger } from '../../vm/runtime/log.js';
import { isSecretEnv } from '../../stdlib/secrets/index.js';

const VALUE = 'hunter2-s3cr3t-value';
const ENV = {
  STRIPE_API_KEY: 'sk_live_abc123',
  PUBLIC_URL: 'https://example.test',
  DATABASE_URL: 'postgres://app:pw-in-url@db/app',
  EMPTY: '',
};

const ROUTES = `
route GET /log {
  log('the key is', secret('x'))
  response.ok({})
}

route GET /json {
  response.ok({ k: secret('x'), list: [secret('x')] })
}

route GET /concat {
  header = 'Bearer ' + secret('x')
  log(header)
  response.ok({ header: header, interpolated: "v=\${secret('x')}", kind: header + '!' })
}

route GET /read {
  response.ok({ name: query.name, value: secret(query.name) })
}

route GET /env {
  response.ok({
    public: env('PUBLIC_URL'),
    key: env('STRIPE_API_KEY'),
    db: env('DATABASE_URL'),
    missing: env('NOPE'),
    empty: env('EMPTY'),
    fallback: env_or('NOPE', 'dflt'),
    present: env_or('PUBLIC_URL', 'dflt'),
    exists: env_exists('PUBLIC_URL'),
    absent: env_exists('EMPTY')
  })
}

route GET /env-name {
  response.ok({ v: env(query.name) })
}

route GET /error/:kind {
  s = secret('x')
  if params.kind == 'field' {
    x = s.a.b
  } else if params.kind == 'int' {
    x = int(s)
  } else if params.kind == 'json' {
    x = json_parse(s)
  } else if params.kind == 'arith' {
    x = s * 2
  } else if params.kind == 'index' {
    x = s[0]
  } else if params.kind == 'fail' {
    fail 400 s
  } else if params.kind == 'fail-concat' {
    fail 400 'token ' + s + ' rejected'
  }
  response.ok({})
}
`;

describe('secrets in an app', () => {
  let dir: string;
  let outside: string;
  let app: App;
  let logger: CaptureLogger;
  const appLog: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-secrets-'));
    outside = mkdtempSync(join(tmpdir(), 'rvm-secrets-outside-'));
    mkdirSync(join(dir, '.secrets'));
    writeFileSync(join(dir, '.secrets', 'x'), VALUE + '\n');
    writeFileSync(join(dir, '.secrets', 'real'), 'inside');
    writeFileSync(join(outside, 'stolen'), 'outside-value');
    symlinkSync(join(outside, 'stolen'), join(dir, '.secrets', 'link'));
    symlinkSync(join(dir, '.secrets', 'real'), join(dir, '.secrets', 'alias'));
    writeFileSync(join(dir, 'secrets.rvm'), ROUTES);
    logger = captureLogger();
    app = await loadApp(dir, { cache: false, dev: true, logger, onAppLog: (line) => appLog.push(line), settings: { env: ENV } });
  });

  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  function leaked(): string[] {
    return [...logger.lines, ...logger.errors, ...appLog].filter((l) => l.includes(VALUE));
  }

  test('log(secret(...)) writes [secret]', async () => {
    assert.equal((await inject(app, { url: '/log' })).status, 200);
    assert.ok(
      appLog.some((l) => l === 'the key is [secret]'),
      appLog.join('\n'),
    );
    assert.deepEqual(leaked(), []);
  });

  test('JSON responses show "[secret]"', async () => {
    const res = await inject(app, { url: '/json' });
    assert.deepEqual(res.json(), { k: '[secret]', list: ['[secret]'] });
    assert.ok(!res.body.includes(VALUE));
  });

  test("'Bearer ' + secret stays secret, through interpolation too", async () => {
    const res = await inject(app, { url: '/concat' });
    assert.deepEqual(res.json(), { header: '[secret]', interpolated: '[secret]', kind: '[secret]' });
    assert.ok(appLog.includes('[secret]'));
    assert.deepEqual(leaked(), []);
  });

  test('runtime error pages (dev mode) never show the value', async () => {
    for (const kind of ['field', 'int', 'json', 'arith', 'index', 'fail', 'fail-concat']) {
      const res = await inject(app, { url: `/error/${kind}` });
      assert.ok(res.status >= 400, `${kind}: ${res.status}`);
      assert.ok(!res.body.includes(VALUE), `${kind} leaked: ${res.body}`);
    }
    assert.deepEqual(leaked(), []);
  });

  test('a missing secret is secret_not_found', async () => {
    const res = await inject(app, { url: '/read?name=nope' });
    assert.equal(res.status, 500);
    assert.equal(res.json().code, 'secret_not_found');
  });

  test('traversal attempts are refused with their codes', async () => {
    const code = async (name: string) => (await inject(app, { url: `/read?name=${encodeURIComponent(name)}` })).json().code;
    assert.equal(await code('../x'), 'invalid_secret_name');
    assert.equal(await code('/etc/passwd'), 'invalid_secret_name');
    assert.equal(await code('..'), 'invalid_secret_name');
    assert.equal(await code('.'), 'invalid_secret_name');
    assert.equal(await code('a/b'), 'invalid_secret_name');
    assert.equal(await code('x\u0000'), 'invalid_secret_name');
    assert.equal(await code('link'), 'secret_outside');
  });

  test('a symlink staying inside .secrets/ is read', async () => {
    assert.deepEqual((await inject(app, { url: '/read?name=alias' })).json(), { name: 'alias', value: '[secret]' });
  });

  test('env, env_or, env_exists; credential-like names and URLs with a password are secret', async () => {
    const res = await inject(app, { url: '/env' });
    assert.deepEqual(res.json(), {
      public: 'https://example.test',
      key: '[secret]',
      db: '[secret]',
      missing: null,
      empty: null,
      fallback: 'dflt',
      present: 'https://example.test',
      exists: true,
      absent: false,
    });
    assert.ok(!res.body.includes('sk_live') && !res.body.includes('pw-in-url'));
  });

  test('a malformed variable name is invalid_env_name', async () => {
    assert.equal((await inject(app, { url: '/env-name?name=A-B' })).json().code, 'invalid_env_name');
    assert.equal((await inject(app, { url: '/env-name?name=' })).json().code, 'invalid_env_name');
    assert.deepEqual((await inject(app, { url: '/env-name?name=PUBLIC_URL' })).json(), { v: 'https://example.test' });
  });
});

describe('which environment variables are secret', () => {
  test('by name', () => {
    for (const name of [
      'JWT_SECRET',
      'GITHUB_TOKEN',
      'STRIPE_API_KEY',
      'DB_PASSWORD',
      'SMTP_PASS',
      'MYSQL_PWD',
      'PRIVATE_KEY_PEM',
      'GOOGLE_APPLICATION_CREDENTIALS',
      'SENTRY_DSN',
      'basic_auth',
      'api_key',
    ]) {
      assert.equal(isSecretEnv(name, 'v'), true, name);
    }
    for (const name of ['PUBLIC_URL', 'PORT', 'NODE_ENV', 'HOST', 'LOG_LEVEL']) assert.equal(isSecretEnv(name, 'v'), false, name);
  });

  test('by a password in a URL', () => {
    assert.equal(isSecretEnv('REDIS_URL', 'redis://:pw@cache:6379'), true);
    assert.equal(isSecretEnv('DATABASE_URL', 'postgres://u:p@h/db'), true);
    assert.equal(isSecretEnv('DATABASE_URL', 'postgres://h/db'), false);
    assert.equal(isSecretEnv('HOME_PAGE', 'https://example.test/a@b'), false);
  });
});
