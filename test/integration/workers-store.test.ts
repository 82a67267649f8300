/**
 * `rvm run --workers N` shares `ctx.store` through the primary (issue 17): a TOTP code sent to
 * two workers at once is accepted once, not once per worker. Real processes, real HTTP.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeBase32Secret, hotp } from '../../stdlib/auth/one-time-password.js';
import { freePort } from '../support/free-port.js';

const CLI = fileURLToPath(new URL('../../tools/cli.js', import.meta.url));
const SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
/** Submissions of one code at once, each on its own connection so the workers share them. */
const SUBMISSIONS = 40;
/** How long the cluster may take to start its workers. */
const START_TIMEOUT_MS = 30_000;

const ROUTES = `
route POST /verify {
  validate {
    code: text
  }
  response.ok({ accepted: totp_verify(body.code, '${SECRET}') })
}
`;

/** POSTs `body` on a new connection (Connection: close); resolves with the JSON answer. */
function post(port: number, body: string): Promise<{ status: number; json: { accepted?: boolean } }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/verify', method: 'POST', agent: false, headers: { 'content-type': 'application/json', connection: 'close' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as { accepted?: boolean } }));
    });
    req.once('error', reject);
    req.end(body);
  });
}

test('under --workers 2 a TOTP code is accepted once across the workers: ctx.store is the primary\'s', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-workers-'));
  writeFileSync(join(dir, 'routes.rvm'), ROUTES);
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, 'run', dir, '--prod', '--workers', '2', '--port', String(port)], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    await new Promise<void>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => reject(new Error(`the workers did not start:\n${output}`)), START_TIMEOUT_MS);
      const read = (d: Buffer): void => {
        output += d.toString();
        if (/Store: +held by the primary process, shared by its 2 workers over IPC/.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', read);
      child.stderr!.on('data', read);
      child.once('exit', (code) => reject(new Error(`rvm run exited with ${code}:\n${output}`)));
    });
    const code = hotp(decodeBase32Secret(SECRET)!, Math.floor(Date.now() / 30_000), 6);
    const answers = await Promise.all(Array.from({ length: SUBMISSIONS }, () => post(port, JSON.stringify({ code }))));
    assert.ok(answers.every((a) => a.status === 200), JSON.stringify(answers.filter((a) => a.status !== 200)));
    assert.equal(answers.filter((a) => a.json.accepted === true).length, 1, 'one acceptance in all, not one per worker');
    const again = await post(port, JSON.stringify({ code }));
    assert.equal(again.json.accepted, false, 'a replay after the burst is refused too');
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
});
