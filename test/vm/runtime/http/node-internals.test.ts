/**
 * The running Node still keeps the private fields node-internals.ts reads, as it reads them:
 * an upgrade that renames or drops one fails here, by name, not as a slow or odd server.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectionHolder, responseStarted, skipDrain } from '../../../../vm/runtime/http/node-internals.js';

test('node:http keeps _dumped on a request, and _httpMessage (with headersSent) on its socket, as the server reads them', async () => {
  const seen: Record<string, unknown> = {};
  const server = http.createServer((req, res) => {
    seen.dumpedBefore = (req as http.IncomingMessage & { _dumped?: unknown })._dumped;
    seen.holderIsResponse = connectionHolder(req.socket) === res;
    seen.startedBefore = responseStarted(req.socket);
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.flushHeaders();
    seen.startedAfter = responseStarted(req.socket);
    skipDrain(req);
    seen.dumpedAfter = (req as http.IncomingMessage & { _dumped?: unknown })._dumped;
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const answer = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(await answer.text(), 'ok');
    assert.deepEqual(
      seen,
      {
        dumpedBefore: false,
        holderIsResponse: true,
        startedBefore: false,
        startedAfter: true,
        dumpedAfter: true,
      },
      `Node ${process.version} changed a field vm/runtime/http/node-internals.ts reads`,
    );
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
