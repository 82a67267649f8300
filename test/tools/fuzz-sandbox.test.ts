/**
 * `rvm fuzz` runs the app from a throwaway copy: its plugins see another app folder (so the
 * records plugin's SQLite file is a new one) and no DATABASE_URL, the app's own `.rvm/` data is
 * neither copied nor touched, and the copy is gone after the run.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fuzzApp } from '../../tools/fuzz.js';
import { DATA_FOLDER, SANDBOX_PREFIX, makeSandbox } from '../../tools/fuzz-sandbox.js';
import { tempApp } from '../support/temp-app.js';

/** Writes, at setup, the app folder and DATABASE_URL its plugins see into the file PROBE_OUT names. */
const PROBE_PLUGIN = `import { appendFileSync } from 'node:fs';
export default {
  name: 'probe',
  version: '1.0.0',
  setup(rvm) {
    const out = rvm.app.secrets.env('PROBE_OUT');
    if (out) appendFileSync(out, JSON.stringify({ dir: rvm.app.dir, url: rvm.app.secrets.env('DATABASE_URL') ?? null }) + '\\n');
  },
};
`;

const NOTES = `type Note {
  title: text @minLength(1)
}

route POST /notes {
  validate {
    title: text @minLength(1) @maxLength(20)
  }
  response.created(Note.create({ title: body.title }))
}
`;

/** Runs `fn` with these environment variables set (undefined: unset), then restores them. */
async function withEnv<T>(vars: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe('rvm fuzz against a throwaway database', () => {
  test('plugins see a copy of the app and no DATABASE_URL; the copy is removed and the app left as it was', async (t) => {
    const dir = tempApp(t, { 'notes.rvm': NOTES, 'probe.mjs': PROBE_PLUGIN, 'rvm.config.json': JSON.stringify({ plugins: ['./probe.mjs'] }) });
    const probe = join(tempApp(t), 'seen.jsonl');
    const report = await withEnv({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/app_data', PROBE_OUT: probe }, () => fuzzApp(dir, { runs: 10, seed: 7 }));
    assert.equal(report.error, null);
    assert.deepEqual(report.findings, []);
    assert.equal(report.routes[0]!.valid.accepted, 10);
    const seen = readFileSync(probe, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { dir: string; url: string | null });
    assert.ok(seen.length >= 1);
    for (const s of seen) {
      assert.notEqual(s.dir, dir);
      assert.ok(s.dir.startsWith(join(dir, DATA_FOLDER, SANDBOX_PREFIX)), s.dir);
      assert.equal(existsSync(s.dir), false, 'the copy is removed after the run');
      assert.equal(s.url, null);
    }
    // The app had no .rvm/ folder: the run made one for the copy and removed it again.
    assert.deepEqual(readdirSync(dir).sort(), ['notes.rvm', 'probe.mjs', 'rvm.config.json']);
  });

  test('neither the environment nor the copied rvm.config.json names a database: SQLITE_PATH, database.url and database.sqlite are gone, the rest kept', (t) => {
    const config = { database: { url: 'postgres://x/y', sqlite: '/var/lib/app/data.sqlite', pool: 4 }, bodyLimit: '2mb' };
    const dir = tempApp(t, { 'api/users.rvm': 'route GET /u {\n  response.ok(1)\n}\n', 'rvm.config.json': JSON.stringify(config) });
    const sandbox = makeSandbox(dir, { DATABASE_URL: 'postgres://x/y', SQLITE_PATH: '/var/lib/app/data.sqlite', HOME: '/home/x' });
    assert.deepEqual(sandbox.env, { HOME: '/home/x' });
    assert.deepEqual(JSON.parse(readFileSync(join(sandbox.dir, 'rvm.config.json'), 'utf8')), { database: { pool: 4 }, bodyLimit: '2mb' });
    assert.deepEqual(JSON.parse(readFileSync(join(dir, 'rvm.config.json'), 'utf8')), config, "the app's own config is untouched");
    sandbox.remove();
  });

  test('the copy holds the app and its secrets but not its data, packages or history; the data is untouched', (t) => {
    const dir = tempApp(t, {
      'api/users.rvm': 'route GET /u {\n  response.ok(1)\n}\n',
      '.secrets/jwt_secret': 'k'.repeat(40),
      '.rvm/data.sqlite': 'the real data',
      'node_modules/pkg/index.js': 'export default 1;',
      '.git/HEAD': 'ref: refs/heads/main',
    });
    const sandbox = makeSandbox(dir, { DATABASE_URL: 'postgres://x/y', HOME: '/home/x' });
    assert.deepEqual(readdirSync(sandbox.dir).sort(), ['.secrets', 'api']);
    assert.equal(readFileSync(join(sandbox.dir, 'api/users.rvm'), 'utf8'), 'route GET /u {\n  response.ok(1)\n}\n');
    assert.equal(readFileSync(join(sandbox.dir, '.secrets/jwt_secret'), 'utf8'), 'k'.repeat(40));
    assert.deepEqual(sandbox.env, { HOME: '/home/x' });
    sandbox.remove();
    assert.equal(existsSync(sandbox.dir), false);
    assert.deepEqual(readdirSync(join(dir, DATA_FOLDER)), ['data.sqlite']);
    assert.equal(readFileSync(join(dir, DATA_FOLDER, 'data.sqlite'), 'utf8'), 'the real data');
  });
});
