/**
 * readRegularFile: only regular files under a cap are read, from the descriptor that was checked;
 * directories, FIFOs and devices are refused at once (a FIFO without a writer must not hang).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UnreadableFileError, readRegularFile } from '../../vm/regular-file.js';
import { plantSpecial } from './special-files.js';

/** The reason readRegularFile refused `path` with. */
function refusal(path: string, maxBytes: number): string {
  try {
    readRegularFile(path, maxBytes);
  } catch (e) {
    if (e instanceof UnreadableFileError) return `${e.reason}: ${e.message}`;
    throw e;
  }
  assert.fail(`${path} was read`);
}

describe('readRegularFile', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-regular-file-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('a regular file is read whole, exactly at the cap too', () => {
    const path = join(dir, 'ok');
    writeFileSync(path, 'hello');
    assert.equal(readRegularFile(path, 5).toString(), 'hello');
    writeFileSync(join(dir, 'empty'), '');
    assert.equal(readRegularFile(join(dir, 'empty'), 0).length, 0);
  });

  test('one byte over the cap is refused without being read, sparse giants included', () => {
    const path = join(dir, 'big');
    writeFileSync(path, 'hello!');
    assert.equal(refusal(path, 5), 'too_large: larger than 5 bytes');
    const giant = join(dir, 'giant');
    writeFileSync(giant, '');
    truncateSync(giant, 8 * 1024 ** 3);
    assert.equal(refusal(giant, 1024), 'too_large: larger than 1024 bytes');
  });

  test('a symlink is followed to a regular file', () => {
    writeFileSync(join(dir, 'target'), 'via link');
    symlinkSync(join(dir, 'target'), join(dir, 'link'));
    assert.equal(readRegularFile(join(dir, 'link'), 100).toString(), 'via link');
  });

  test('a symlink to /dev/zero, a FIFO without a writer and a directory are refused at once', () => {
    assert.equal(refusal(plantSpecial(dir, 'zero', 'dev-zero'), 1024 ** 3), 'not_regular: not a regular file (a device)');
    assert.equal(refusal(plantSpecial(dir, 'fifo', 'fifo'), 1024), 'not_regular: not a regular file (a FIFO)');
    assert.equal(refusal(plantSpecial(dir, 'dir', 'directory'), 1024), 'not_regular: not a regular file (a directory)');
  });

  test('errors of the open itself are thrown as they are', () => {
    assert.throws(
      () => readRegularFile(join(dir, 'missing'), 10),
      (e: NodeJS.ErrnoException) => e.code === 'ENOENT',
    );
  });
});
