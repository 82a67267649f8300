import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { LOG_BUFFER_BYTES, LOG_FLUSH_MS, captureLogger, createLogger, encodeLogText, formatRequestLine } from '../../../vm/runtime/log.js';

function sink() {
  const writes: string[] = [];
  return { writes, write: (chunk: Uint8Array | string) => writes.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')) };
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

describe('request lines', () => {
  test('are written as the bytes of formatRequestLine, UTF-8 paths included', () => {
    const out = sink();
    const log = createLogger({ stream: out });
    const cases: [string, string, number, number][] = [
      ['GET', '/hello', 200, 0.04],
      ['POST', '/api/users', 201, 12.34],
      ['GET', '/caf\u00e9/\u20ac/\u{1f600}', 404, 1234.56],
      ['GET', '/lone/\ud800/x', 500, 0],
      ['DELETE', '/x', 599, 99999.99],
      // Nonsense numbers read 0 in both writers.
      ['GET', '/odd', Number.NaN, -5],
      ['GET', '/odd', 200.5, Number.POSITIVE_INFINITY],
    ];
    for (const [method, path, status, ms] of cases) log.request(method, path, status, ms);
    log.flush();
    // As UTF-8 bytes read back: a lone surrogate becomes U+FFFD, as Buffer.from writes it.
    const expected = Buffer.from(cases.map((c) => formatRequestLine(...c) + '\n').join('')).toString('utf8');
    assert.equal(out.writes.join(''), expected);
    assert.equal(formatRequestLine('GET', '/hello', 200, 0.04), 'GET /hello 200 0.0ms');
    assert.equal(formatRequestLine('GET', '/hello', 200, 12.35), 'GET /hello 200 12.4ms');
    assert.equal(expected.split('\n')[3], 'GET /lone/\ufffd/x 500 0.0ms');
    assert.equal(formatRequestLine('GET', '/odd', Number.NaN, -5), 'GET /odd 0 0.0ms');
  });

  test('a path longer than the buffer is still logged whole, after what was pending', () => {
    const out = sink();
    const log = createLogger({ stream: out });
    log.request('GET', '/a', 200, 1);
    const long = '/' + 'p'.repeat(LOG_BUFFER_BYTES);
    log.request('GET', long, 200, 1);
    log.flush();
    assert.deepEqual(out.writes, ['GET /a 200 1.0ms\n', `GET ${long} 200 1.0ms\n`]);
  });

  test('lines fill the buffer to within a line of LOG_BUFFER_BYTES before it is written', () => {
    const out = sink();
    const log = createLogger({ stream: out });
    const line = formatRequestLine('GET', '/hello', 200, 0.5) + '\n';
    const count = Math.ceil(LOG_BUFFER_BYTES / line.length) + 5;
    for (let i = 0; i < count; i++) log.request('GET', '/hello', 200, 0.5);
    assert.equal(out.writes.length, 1);
    assert.ok(out.writes[0].length <= LOG_BUFFER_BYTES && out.writes[0].length > LOG_BUFFER_BYTES - 300, String(out.writes[0].length));
    log.flush();
    assert.equal(out.writes.join(''), line.repeat(count));
  });
});

test('captureLogger keeps lines', () => {
  const log = captureLogger();
  log.info('a');
  log.error('b');
  assert.deepEqual(log.lines, ['a']);
  assert.deepEqual(log.errors, ['b']);
});

/** True when `text` holds a character no log line may hold raw. */
function hasRawControl(text: string): boolean {
  return /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.test(text);
}

describe('the log encoder', () => {
  test('escapes line breaks, tab, ESC, DEL, C1, line separators and bidi overrides', () => {
    assert.equal(encodeLogText('a\nb\rc\td'), 'a\\nb\\rc\\td');
    assert.equal(encodeLogText('\u001b[31mred\u001b[0m'), '\\x1b[31mred\\x1b[0m');
    assert.equal(encodeLogText('\u0000\u0007\u007f\u0085\u009b'), '\\x00\\x07\\x7f\\x85\\x9b');
    assert.equal(encodeLogText('x\u2028y\u2029z\u202eq\u2066'), 'x\\u{2028}y\\u{2029}z\\u{202e}q\\u{2066}');
  });

  test('leaves other text alone, printable Unicode included, and is idempotent', () => {
    for (const text of ['GET /hello 200 0.4ms', 'caf\u00e9 \u20ac \u{1f600}', 'back\\slash', '\u00a0nbsp', '']) assert.equal(encodeLogText(text), text);
    const once = encodeLogText('a\nb\u001b');
    assert.equal(encodeLogText(once), once);
  });

  test('every writer encodes: info, error and request lines are one line each', () => {
    const out = sink();
    const log = createLogger({ stream: out, errorStream: out });
    const forged = 'x\nGET /admin/stats 200 0.1ms';
    log.info(`[id] ${forged}`);
    log.error(`runtime error: ${forged}\u001b[2J`);
    log.request('GET', '/a\u001b[31m\u009b\u2028/\n', 404, 1);
    log.request('G\rET', '/b', 200, 1);
    log.flush();
    const lines = out.writes.join('').split('\n');
    assert.equal(lines.pop(), '');
    assert.deepEqual(lines, [
      '[id] x\\nGET /admin/stats 200 0.1ms',
      'runtime error: x\\nGET /admin/stats 200 0.1ms\\x1b[2J',
      'GET /a\\x1b[31m\\x9b\\u{2028}/\\n 404 1.0ms',
      'G\\rET /b 200 1.0ms',
    ]);
    assert.equal(lines[2], formatRequestLine('GET', '/a\u001b[31m\u009b\u2028/\n', 404, 1));
    assert.ok(!lines.some(hasRawControl));
  });

  test('a request path of escapes at the worst size still fits the line budget', () => {
    const out = sink();
    const log = createLogger({ stream: out });
    const path = '/' + '\u2028'.repeat(LOG_BUFFER_BYTES / 8 - 10);
    log.request('GET', path, 200, 1);
    log.request('GET', '/' + '\u2028'.repeat(LOG_BUFFER_BYTES), 200, 1);
    log.flush();
    const lines = out.writes.join('').split('\n');
    assert.equal(lines.length, 3);
    assert.equal(lines[0], formatRequestLine('GET', path, 200, 1));
    assert.ok(!lines.some(hasRawControl));
  });

  test('captureLogger encodes as the real logger does', () => {
    const log = captureLogger();
    log.info('a\nb');
    log.error('c\rd');
    log.request('GET', '/\n', 200, 0);
    assert.deepEqual(log.lines, ['a\\nb', 'GET /\\n 200 0.0ms']);
    assert.deepEqual(log.errors, ['c\\rd']);
  });
});
