/** One turn's calls go together: what the IPC and Redis stores batch their requests with. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { TurnBatch } from '../../../../vm/runtime/stores/turn-batch.js';

test('the items of one event-loop turn are sent together, in order, once the turn ends', async () => {
  const sent: number[][] = [];
  const batch = new TurnBatch<number>((items) => sent.push(items));
  batch.add(1);
  batch.add(2);
  await Promise.resolve();
  batch.add(3);
  assert.deepEqual(sent, [], 'nothing before the turn ends, microtasks included');
  assert.equal(batch.size, 3);
  await nextTurn();
  assert.deepEqual(sent, [[1, 2, 3]]);
  batch.add(4);
  await nextTurn();
  assert.deepEqual(sent, [[1, 2, 3], [4]], 'the next turn is a batch of its own');
  assert.equal(batch.size, 0);
});

test('taken out before the turn ends, items are not sent, and an empty batch is never sent', async () => {
  const sent: string[][] = [];
  const batch = new TurnBatch<string>((items) => sent.push(items));
  batch.add('a');
  batch.add('b');
  assert.deepEqual(batch.take(), ['a', 'b']);
  await nextTurn();
  assert.deepEqual(sent, []);
  batch.add('c');
  await nextTurn();
  assert.deepEqual(sent, [['c']]);
});
