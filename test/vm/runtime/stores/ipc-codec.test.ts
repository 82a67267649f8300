/**
 * The primary-held store's wire format (vm/runtime/stores/ipc-codec.ts) round-trips: every
 * operation's request, every kind of reply and every operation's result, alone and in mixed
 * batches, written by one side, carried as JSON (as Node's IPC carries them) and read back by the
 * other, come back equal. A field codec, a reply kind or an operation added without its generator
 * here fails the test.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  BOXED,
  FAILED,
  KEY,
  NOTHING,
  NUMBER,
  REPLY_KINDS,
  STORE_OP_CODECS,
  TTL,
  VALUE,
  WINDOW,
  readFields,
  replyKindOf,
  requestOpAt,
  writeRequest,
  type FieldCodec,
  type ReplyKind,
  type StoreOpCodec,
} from '../../../../vm/runtime/stores/ipc-codec.js';
import { RvmError, type Value } from '../../../../vm/values.js';

/** A message as the other process receives it. */
const overTheWire = <T>(message: T): T => JSON.parse(JSON.stringify(message)) as T;

/** A stored value: JSON data (a -0 would arrive as 0, as through any shared store). */
const jsonData = fc.json().map((text) => JSON.parse(text) as Value);
const window = fc.record({ allowed: fc.boolean(), remaining: fc.nat(), resetAt: fc.nat() }, { noNullPrototype: true });

/** What each field may hold. */
const FIELD_VALUES = new Map<FieldCodec<unknown>, fc.Arbitrary<unknown>>([
  [KEY, fc.string()],
  [BOXED, fc.option(jsonData, { nil: undefined })],
  [TTL, fc.option(fc.integer(), { nil: undefined })],
  [NUMBER, fc.integer()],
]);

/** What each kind of reply may carry. */
const REPLY_VALUES = new Map<ReplyKind, fc.Arbitrary<unknown>>([
  [NOTHING, fc.constant(undefined)],
  [VALUE, jsonData],
  [WINDOW, window],
  [FAILED, fc.tuple(fc.string(), fc.option(fc.string(), { nil: undefined })).map(([message, code]) => new RvmError(message, code))],
]);

/** What each operation may answer. */
const RESULTS = new Map<string, fc.Arbitrary<unknown>>([
  ['get', fc.option(jsonData, { nil: undefined })],
  ['set', fc.constant(undefined)],
  ['delete', fc.constant(undefined)],
  ['compareAndSet', fc.boolean()],
  ['hit', window],
  ['peek', window],
  ['reset', fc.constant(undefined)],
]);

function generator<K, V>(table: Map<K, fc.Arbitrary<V>>, key: K, what: string): fc.Arbitrary<V> {
  const arbitrary = table.get(key);
  if (arbitrary === undefined) throw new Error(`no generator for ${what}: add one to this test`);
  return arbitrary;
}

/** The fields of a request of `op`. */
const argsOf = (op: StoreOpCodec): fc.Arbitrary<unknown[]> =>
  fc.tuple(...op.fields.map((field, i) => generator(FIELD_VALUES, field, `field ${i} of ${op.name}`)));

/** A request of any operation. */
const anyRequest = fc.constantFrom(...(STORE_OP_CODECS as readonly StoreOpCodec[])).chain((op) => argsOf(op).map((args) => ({ op, args })));

/** A reply of any kind. */
const anyReply = fc
  .constantFrom(...REPLY_KINDS)
  .chain((kind) => generator(REPLY_VALUES, kind, `reply kind ${REPLY_KINDS.indexOf(kind)}`).map((value) => ({ kind, value })));

/** Reads a worker's list of requests as the primary does. */
function readRequests(list: readonly unknown[]): { op: StoreOpCodec; args: unknown[] }[] {
  const read = [];
  for (let at = 0; at < list.length; ) {
    const op = requestOpAt(list, at);
    assert.ok(op !== undefined, `an operation at ${at}`);
    read.push({ op, args: readFields(op, list, at + 1) });
    at += 1 + op.fields.length;
  }
  return read;
}

/** Reads the primary's list of replies as a worker does. */
function readReplies(list: readonly unknown[]): { kind: ReplyKind; value: unknown }[] {
  const read = [];
  for (let at = 0; at < list.length; ) {
    const kind = replyKindOf(list[at]);
    assert.ok(kind !== undefined, `a reply kind at ${at}`);
    read.push({ kind, value: kind.read(list, at + 1) });
    at += 1 + kind.width;
  }
  return read;
}

describe('store requests', () => {
  for (const op of STORE_OP_CODECS as readonly StoreOpCodec[]) {
    test(`${op.name}: its number, then its ${op.fields.length} fields, read back equal`, () => {
      fc.assert(
        fc.property(argsOf(op), (args) => {
          const list: unknown[] = [];
          writeRequest(op, args, list);
          assert.equal(list.length, 1 + op.fields.length);
          assert.deepEqual(readRequests(overTheWire(list)), [{ op, args }]);
        }),
      );
    });
  }

  test('a batch of any requests, one flat list, reads back in order', () => {
    fc.assert(
      fc.property(fc.array(anyRequest, { maxLength: 20 }), (requests) => {
        const list: unknown[] = [];
        for (const { op, args } of requests) writeRequest(op, args, list);
        assert.deepEqual(readRequests(overTheWire(list)), requests);
      }),
    );
  });

  test('each operation stands in the table at its number', () => {
    assert.deepEqual(
      STORE_OP_CODECS.map((op) => op.code),
      STORE_OP_CODECS.map((_, n) => n),
    );
  });

  test('only a number names an operation', () => {
    assert.equal(requestOpAt([0], 0), STORE_OP_CODECS[0]);
    for (const wire of ['0', STORE_OP_CODECS.length, -1, 1.5, null, [0]]) assert.equal(requestOpAt([wire], 0), undefined, JSON.stringify(wire));
  });
});

describe('store replies', () => {
  for (const kind of REPLY_KINDS) {
    const tag = REPLY_KINDS.indexOf(kind);
    test(`kind ${tag}: its tag, then its ${kind.width} fields, read back equal`, () => {
      fc.assert(
        fc.property(generator(REPLY_VALUES, kind, `reply kind ${tag}`), (value) => {
          const list: unknown[] = [];
          kind.write(value, list);
          assert.equal(list.length, 1 + kind.width);
          assert.equal(list[0], tag);
          assert.deepEqual(readReplies(overTheWire(list)), [{ kind, value }]);
        }),
      );
    });
  }

  for (const op of STORE_OP_CODECS as readonly StoreOpCodec[]) {
    test(`${op.name}: its result reads back equal`, () => {
      fc.assert(
        fc.property(generator(RESULTS, op.name, `the result of ${op.name}`), (result) => {
          const list: unknown[] = [];
          op.reply(result, list);
          const [reply, ...more] = readReplies(overTheWire(list));
          assert.deepEqual(more, []);
          assert.notEqual(reply!.kind, FAILED);
          assert.deepEqual(reply!.value, result);
        }),
      );
    });
  }

  test('a batch of any replies, one flat list, reads back in order', () => {
    fc.assert(
      fc.property(fc.array(anyReply, { maxLength: 20 }), (replies) => {
        const list: unknown[] = [];
        for (const { kind, value } of replies) kind.write(value, list);
        assert.deepEqual(readReplies(overTheWire(list)), replies);
      }),
    );
  });

  test('only a number is a tag', () => {
    assert.equal(replyKindOf(1), VALUE);
    for (const wire of ['1', REPLY_KINDS.length, -1, 0.5, null, undefined, [1]]) assert.equal(replyKindOf(wire), undefined, JSON.stringify(wire));
  });

  test('a failure that is not an RvmError crosses with its message and no code, read as the runtime’s error', () => {
    const list: unknown[] = [];
    FAILED.write(new Error('unknown store operation 99'), list);
    FAILED.write('not even an Error', list);
    assert.deepEqual(list, [3, 'unknown store operation 99', null, 3, 'not even an Error', null]);
    assert.deepEqual(
      readReplies(overTheWire(list)).map((r) => r.value),
      [new RvmError('unknown store operation 99'), new RvmError('not even an Error')],
    );
  });
});
