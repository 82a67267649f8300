/**
 * One app secret for every worker (spec/deploy.md, "One machine"): a bundle served by `rvm run --workers 2` without
 * APP_SECRET has no `.secrets/` to share a generated secret through, so the primary generates it
 * once and hands it to its workers; a CSRF token one worker signed passes `guard csrf` on the
 * other. `--prod` on such a bundle warns once that what it signs will not survive a restart.
 * Real processes, real HTTP.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { EPHEMERAL_SECRET_WARNING } from '../../tools/commands/run.js';
import { sendAll, sendFresh, statusCounts } from '../support/http-client.js';
import { RVM_CLI, startRvmServer } from '../support/rvm-cluster.js';
import { tempApp } from '../support/temp-app.js';

/** Submissions of one token, each on its own connection, so the workers take turns answering. */
const SUBMISSIONS = 24;
/** How long one answer may take on a loaded CI machine. */
const ANSWER_TIMEOUT_MS = 10_000;
/** APP_SECRET as an unset variable (the secret source takes an empty value as none). */
const NO_APP_SECRET = { APP_SECRET: '' };

const ROUTES = `
route GET /csrf {
  response.ok({ token: csrf_token() })
}

route POST /submit {
  guard csrf
  response.ok({ ok: true })
}
`;

const dir = tempApp({ after }, { 'app/routes.rvm': ROUTES });
const bundle = join(dir, 'app.rvmb');

before(() => {
  const compiled = spawnSync(process.execPath, [RVM_CLI, 'compile', join(dir, 'app'), '-o', bundle], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(compiled.status, 0, compiled.stderr);
});

/** How many times `line` stands in `text`. */
function occurrences(text: string, line: string): number {
  return text.split(line).length - 1;
}

test('a bundle under --workers 2 without APP_SECRET: a CSRF token from one worker passes guard csrf on the other, on every request', {
  timeout: 60_000,
}, async () => {
  const server = await startRvmServer(bundle, { workers: 2, prod: false, env: NO_APP_SECRET });
  try {
    const issued = await sendFresh(`${server.url}/csrf`, { timeoutMs: ANSWER_TIMEOUT_MS });
    assert.equal(issued.status, 200, issued.body);
    const token = (JSON.parse(issued.body) as { token: string }).token;
    const cookie = (issued.headers['set-cookie'] ?? []).map((l) => l.split(';')[0]!).find((p) => p.startsWith('rvm_csrf='));
    assert.ok(cookie, 'the token is set in its cookie');
    const replies = await sendAll(
      Array.from({ length: SUBMISSIONS }, () => `${server.url}/submit`),
      {
        method: 'POST',
        body: {},
        headers: { cookie, 'x-csrf-token': token },
        timeoutMs: ANSWER_TIMEOUT_MS,
      },
    );
    assert.deepEqual(statusCounts(replies), { 200: SUBMISSIONS }, 'every worker accepts the token: they sign with one secret');
    assert.equal(occurrences(server.output(), EPHEMERAL_SECRET_WARNING), 0, 'no warning outside --prod');
  } finally {
    await server.stop();
  }
});

for (const workers of [2, undefined]) {
  test(`--prod on a bundle without APP_SECRET warns exactly once (${workers === undefined ? 'one process' : 'not once per worker'}) that sessions will not survive a restart`, {
    timeout: 60_000,
  }, async () => {
    const server = await startRvmServer(bundle, { workers, env: NO_APP_SECRET });
    try {
      assert.equal(occurrences(server.output(), EPHEMERAL_SECRET_WARNING), 1, server.output());
    } finally {
      await server.stop();
    }
  });
}

test('--prod on a bundle with APP_SECRET set does not warn', { timeout: 60_000 }, async () => {
  const server = await startRvmServer(bundle, { workers: 2, env: { APP_SECRET: 'workers-app-secret-0123456789abcdefghijkl' } });
  try {
    assert.equal(occurrences(server.output(), EPHEMERAL_SECRET_WARNING), 0, server.output());
  } finally {
    await server.stop();
  }
});
