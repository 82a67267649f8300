/**
 * Upload temporary files a killed process left behind are swept when `rvm run` starts (spec/deploy.md, "One machine"):
 * an upload directory names its owning pid, and a start removes those whose process is gone (and
 * any older than STALE_UPLOAD_MS) while a running process's stay. A real server on a private
 * TMPDIR, real uploads.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { STALE_UPLOAD_MS } from '../../vm/runtime/http/multipart.js';
import { startRvmServer } from '../support/rvm-cluster.js';
import { tempApp } from '../support/temp-app.js';

const ROUTES = `
route GET /ping {
  response.ok({ ok: true })
}
`;

const appDir = tempApp({ after }, { 'routes.rvm': ROUTES });
/** The servers' TMPDIR, where multipart makes its upload folders. */
const temp = tempApp({ after });

/** The pid of a process that has exited (as a killed server's is). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  assert.equal(child.status, 0);
  return child.pid;
}

/** An upload directory as multipart leaves it mid-request: `rvm-upload-<pid>-XXXXXX/0`. */
function leaveUpload(name: string, ageMs = 0): string {
  const dir = join(temp, name);
  mkdirSync(dir);
  writeFileSync(join(dir, '0'), 'half an upload');
  if (ageMs > 0) {
    const then = (Date.now() - ageMs) / 1000;
    utimesSync(dir, then, then);
  }
  return dir;
}

test('a start removes the upload files of processes that are gone and keeps those of a running one', { timeout: 60_000 }, async () => {
  const killed = leaveUpload(`rvm-upload-${deadPid()}-aB3dE9`);
  const oldUnnamed = leaveUpload('rvm-upload-Xy12Zq', STALE_UPLOAD_MS + 60_000);
  // This test's own process stands for a worker of a live server: its upload is in progress.
  const live = leaveUpload(`rvm-upload-${process.pid}-Qw7Er5`);
  const recentUnnamed = leaveUpload('rvm-upload-Rt5Yu8');
  const stranger = leaveUpload('rvm-upload-app-Zx9Cv1');
  const server = await startRvmServer(appDir, { workers: 2, env: { TMPDIR: temp } });
  try {
    assert.equal(existsSync(killed), false, "a killed process's upload is swept");
    assert.equal(existsSync(oldUnnamed), false, `an upload directory older than ${STALE_UPLOAD_MS} ms is swept whoever made it`);
    assert.equal(existsSync(join(live, '0')), true, "a running process's upload survives");
    assert.equal(existsSync(join(recentUnnamed, '0')), true, 'a recent directory without a pid survives');
    assert.equal(existsSync(join(stranger, '0')), true, 'a folder not named like an upload directory is not touched');
    assert.deepEqual(readdirSync(temp).sort(), ['rvm-upload-Rt5Yu8', `rvm-upload-${process.pid}-Qw7Er5`, 'rvm-upload-app-Zx9Cv1'].sort());
  } finally {
    await server.stop();
  }
});
