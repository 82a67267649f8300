/**
 * The one reader of third parties' answers under a cap (WhatsApp's Cloud API, the sign-in
 * providers): at the cap the bytes come back whole; past it null, and the body is ended rather
 * than read on — for undici's Node streams and fetch's web streams alike.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { readCapped } from '../../plugins/kit/capped-answer.js';

const CAP = 1024;

test('a Node stream: the bytes at the cap whole; one byte more is null and the stream destroyed', async () => {
  const atCap = await readCapped(Readable.from([Buffer.alloc(1000, 1), Buffer.alloc(CAP - 1000, 2)]), CAP);
  assert.equal(atCap?.length, CAP);
  assert.equal(atCap?.[CAP - 1], 2);
  const over = Readable.from([Buffer.alloc(1000), Buffer.alloc(CAP - 1000 + 1), Buffer.alloc(10)]);
  assert.equal(await readCapped(over, CAP), null);
  assert.equal(over.destroyed, true, 'the rest is not read');
});

test('a fetch body: one byte over the cap is null and the stream cancelled', async () => {
  let pulls = 0;
  let cancelled = false;
  const endless = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulls++;
      controller.enqueue(new Uint8Array(CAP / 4 + 1));
    },
    cancel() {
      cancelled = true;
    },
  });
  assert.equal(await readCapped(endless, CAP), null);
  assert.equal(cancelled, true);
  assert.ok(pulls <= 5, `stopped at the chunk past the cap, not after ${pulls} chunks`);
  assert.deepEqual(await readCapped(new Response('{"ok":true}').body!, CAP), Buffer.from('{"ok":true}'));
});
