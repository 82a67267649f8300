/**
 * `rvm run --workers N` shares `ctx.store` through the primary (spec/stores.md, "Primary-held store (IPC)"): a TOTP code sent to
 * two workers at once is accepted once, not once per worker. Real processes, real HTTP.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeBase32Secret, hotp } from '../../stdlib/auth/one-time-password.js';
import { sendFresh } from '../support/http-client.js';
import { startRvmServer } from '../support/rvm-cluster.js';

const SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
/** Submissions of one code at once, each on its own connection so the workers share them. */
const SUBMISSIONS = 40;
/** How long one answer may take on a loaded CI machine. */
const ANSWER_TIMEOUT_MS = 10_000;

const ROUTES = `
route POST /verify {
  validate {
    code: text
  }
  response.ok({ accepted: totp_verify(body.code, '${SECRET}') })
}
`;

/** POSTs `{code}` on a connection of its own; the status and the JSON answer. */
async function post(url: string, code: string): Promise<{ status: number; json: { accepted?: boolean; code?: string } }> {
  const reply = await sendFresh(`${url}/verify`, { method: 'POST', body: { code }, timeoutMs: ANSWER_TIMEOUT_MS });
  return { status: reply.status, json: JSON.parse(reply.body) as { accepted?: boolean; code?: string } };
}

test("under --workers 2 a TOTP code is accepted once across the workers: ctx.store is the primary's", { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-workers-'));
  writeFileSync(join(dir, 'routes.rvm'), ROUTES);
  const server = await startRvmServer(dir, { workers: 2 });
  try {
    assert.match(server.output(), /Store: +held by the primary process, shared by its 2 workers over IPC/);
    const code = hotp(decodeBase32Secret(SECRET)!, Math.floor(Date.now() / 30_000), 6);
    const answers = await Promise.all(Array.from({ length: SUBMISSIONS }, () => post(server.url, code)));
    // The others are replays (counted as wrong codes: false, then 429 once the secret locks) or
    // lost the race to the winner (429 too_many_attempts): never a second acceptance.
    const refused = (a: { status: number; json: { accepted?: boolean; code?: string } }) =>
      (a.status === 200 && a.json.accepted === false) || (a.status === 429 && a.json.code === 'too_many_attempts');
    assert.ok(
      answers.every((a) => a.json.accepted === true || refused(a)),
      JSON.stringify(answers.filter((a) => a.json.accepted !== true && !refused(a))),
    );
    assert.equal(answers.filter((a) => a.json.accepted === true).length, 1, 'one acceptance in all, not one per worker');
    const again = await post(server.url, code);
    assert.ok(refused(again), `a replay after the burst is refused too: ${JSON.stringify(again)}`);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
