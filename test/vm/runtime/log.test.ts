import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { LOG_BUFFER_BYTES, LOG_FLUSH_MS, captureLogger, createLogger } from '../../../vm/runtime/log.js';

function sink() {
  const writes: string[] = [];
  return { writes, write: (chunk: string) => writes.push(chunk) };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('createLogger', () => {
  test(`lines are batched and written within LOG_FLUSH_MS (${LOG_FLUSH_MS} ms)`, async () => {
    const out = sink();
    const log = createLogger({ stream: out, errorStream: out });
    log.info('a');
    await tick();
    log.info('b');
    assert.deepEqual(out.writes, []);
    await new Promise((r) => setTimeout(r, LOG_FLUSH_MS + 20));
    assert.deepEqual(out.writes, ['a\nb\n']);
    log.info('c');
    await new Promise((r) => setTimeout(r, LOG_FLUSH_MS + 20));
    assert.deepEqual(out.writes, ['a\nb\n', 'c\n']);
  });

  test('a full buffer is written at once', () => {
    const out = sink();
    const log = createLogger({ stream: out });
    const line = 'x'.repeat(1023);
    for (let i = 0; i < LOG_BUFFER_BYTES / 1024; i++) log.info(line);
    assert.equal(out.writes.length, 1);
    assert.equal(out.writes[0].length, LOG_BUFFER_BYTES);
  });

  test('errors flush pending lines first, then go to the error stream at once', () => {
    const out = sink();
    const err = sink();
    const log = createLogger({ stream: out, errorStream: err });
    log.info('before');
    log.error('bad');
    assert.deepEqual(out.writes, ['before\n']);
    assert.deepEqual(err.writes, ['bad\n']);
  });

  test('flush() writes what is pending; quiet drops info but keeps errors', async () => {
    const out = sink();
    const log = createLogger({ stream: out });
    log.info('x');
    log.flush();
    assert.deepEqual(out.writes, ['x\n']);
    await tick();
    assert.deepEqual(out.writes, ['x\n']);
    const q = sink();
    const quiet = createLogger({ stream: q, errorStream: q, quiet: true });
    quiet.info('hidden');
    quiet.error('shown');
    quiet.flush();
    assert.deepEqual(q.writes, ['shown\n']);
  });
});

test('captureLogger keeps lines', () => {
  const log = captureLogger();
  log.info('a');
  log.error('b');
  assert.deepEqual(log.lines, ['a']);
  assert.deepEqual(log.errors, ['b']);
});
