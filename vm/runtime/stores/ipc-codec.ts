/**
 * The wire format of the primary-held store (spec/stores.md, "Messages"): one table of the
 * operations a worker may ask of the primary — each one's fields, how each field crosses, what it
 * runs on the primary's state and how its result is answered — and one table of the reply kinds.
 * The worker's side (IpcStore) writes requests and reads replies with it, the primary's side
 * (PrimaryStore) reads requests and writes replies with it: neither knows the format on its own.
 *
 * Messages are JSON (cluster's and `fork`'s serialization) and carry batches, flat:
 *   requests `{ rvmStore: 1, batch, requests: [op, ...fields, op, ...fields, …] }` — `op` an
 *            index into STORE_OP_CODECS, then that operation's fields in its table order;
 *   replies  `{ rvmStore: 1, batch, replies: [tag, ...fields, tag, ...fields, …] }` — one per
 *            request, in its order, `tag` an index into REPLY_KINDS.
 * Flat lists of numbers and strings, not an object per request: JSON reads and writes them about
 * four times faster, which is most of what a request costs the two processes.
 * Messages without `rvmStore: 1` are someone else's (the cluster's own `{ rvm: … }`) and ignored.
 */
import { RvmError, type Value } from '../../values.js';
import type { WindowResult } from '../../host/stores.js';
import type { InProcessStore } from './memory.js';

/** A worker's message: the requests of one turn of its event loop, flat. */
export interface StoreRequests {
  rvmStore: 1;
  batch: number;
  requests: unknown[];
}

/** The primary's message: the replies to one StoreRequests, flat and in its order. */
export interface StoreReplies {
  rvmStore: 1;
  batch: number;
  replies: unknown[];
}

/** Whether `m` is a worker's StoreRequests. */
export const isRequests = (m: unknown): m is StoreRequests =>
  typeof m === 'object' &&
  m !== null &&
  (m as StoreRequests).rvmStore === 1 &&
  typeof (m as StoreRequests).batch === 'number' &&
  Array.isArray((m as StoreRequests).requests);

/** Whether `m` is the primary's StoreReplies. */
export const isReplies = (m: unknown): m is StoreReplies =>
  typeof m === 'object' &&
  m !== null &&
  (m as StoreReplies).rvmStore === 1 &&
  typeof (m as StoreReplies).batch === 'number' &&
  Array.isArray((m as StoreReplies).replies);

/** How one field of a request crosses: written by the worker, read back by the primary. */
export interface FieldCodec<T> {
  write(value: T): unknown;
  /** The field as the worker gave it; throws when no worker could have written `wire` (that request fails alone). */
  read(wire: unknown, op: string): T;
}

/** A key: a string, as it is. */
export const KEY: FieldCodec<string> = {
  write: (key) => key,
  read(wire, op) {
    if (typeof wire !== 'string') throw new Error(`store request ${op} without a key`);
    return wire;
  },
};

/**
 * A value that may be undefined, boxed: `[]` or `[v]`. JSON turns an `undefined` list element into
 * `null`, which is a value: `compareAndSet` takes undefined as "absent" and must tell them apart.
 * Anything else is refused rather than read as undefined.
 */
export const BOXED: FieldCodec<Value | undefined> = {
  write: (value) => (value === undefined ? [] : [value]),
  read(wire) {
    if (!Array.isArray(wire) || wire.length > 1) throw new Error('store request with a value that is not boxed');
    return wire.length === 1 ? (wire[0] as Value) : undefined;
  },
};

/**
 * A TTL in ms, `false` when there is none. Any other TTL goes as it is: JSON turns NaN and Infinity
 * into `null`, which the primary's state refuses as `invalid_ttl`, as in process.
 */
export const TTL: FieldCodec<number | undefined> = {
  write: (ttlMs) => ttlMs ?? false,
  read: (wire) => (wire === false ? undefined : (wire as number)),
};

/** A count or a duration (a window's limit and length), checked by the state as in process. */
export const NUMBER: FieldCodec<number> = {
  write: (n) => n,
  read: (wire) => wire as number,
};

/** A kind of reply: its tag (its index in REPLY_KINDS), then `width` fields. */
export interface ReplyKind<In = unknown, Out = In> {
  readonly width: number;
  /** Appends the tag and the fields of `value`. */
  write(value: In, out: unknown[]): void;
  /** The value of the fields at `list[at…]` (after the tag). */
  read(list: readonly unknown[], at: number): Out;
}

/** Undefined: no fields. */
export const NOTHING: ReplyKind<undefined | void> = {
  width: 0,
  write: (_value, out) => void out.push(0),
  read: () => undefined,
};

/** A value, as JSON carries it. */
export const VALUE: ReplyKind<unknown> = {
  width: 1,
  write: (value, out) => void out.push(1, value),
  read: (list, at) => list[at],
};

/** A rate-limit window: allowed (0 or 1), remaining, resetAt. */
export const WINDOW: ReplyKind<WindowResult> = {
  width: 3,
  write: (w, out) => void out.push(2, w.allowed ? 1 : 0, w.remaining, w.resetAt),
  read: (list, at) => ({ allowed: list[at] === 1, remaining: list[at + 1] as number, resetAt: list[at + 2] as number }),
};

/** A request that failed: its message and its code (null for none), raised in the worker as an RvmError with that code. */
export const FAILED: ReplyKind<unknown, RvmError> = {
  width: 2,
  write(error, out) {
    const e = error as { message?: unknown; code?: unknown } | null;
    out.push(3, String(e?.message ?? error), typeof e?.code === 'string' ? e.code : null);
  },
  read: (list, at) => new RvmError(String(list[at]), (list[at + 1] as string | null) ?? undefined),
};

/** Every reply kind, by its tag. */
export const REPLY_KINDS: readonly ReplyKind[] = [NOTHING, VALUE, WINDOW, FAILED];

/** The reply kind tagged `tag`, or undefined when none is (a request the primary left unanswered). */
export function replyKindOf(tag: unknown): ReplyKind | undefined {
  // Only a number is a tag: REPLY_KINDS['1'] would read as one too.
  return typeof tag === 'number' ? REPLY_KINDS[tag] : undefined;
}

/** An operation a worker may ask of the primary. */
export interface StoreOpCodec<Args extends unknown[] = unknown[], Result = unknown> {
  /** Its number on the wire: its index in STORE_OP_CODECS. */
  readonly code: number;
  readonly name: string;
  /** Its fields after the operation's number, in the order of its method's parameters. */
  readonly fields: { readonly [I in keyof Args]: FieldCodec<Args[I]> };
  /** Runs it on the primary's state, to completion (synchronously: what makes it atomic across the workers). */
  call(state: InProcessStore, args: Args, now: () => number): Result;
  /** Appends its result as a reply. */
  reply(result: Result, out: unknown[]): void;
}

/** A value's reply, NOTHING when it is absent. */
const valueOrNothing = (value: Value | undefined, out: unknown[]): void => (value === undefined ? NOTHING.write(value, out) : VALUE.write(value, out));

const GET: StoreOpCodec<[string], Value | undefined> = { code: 0, name: 'get', fields: [KEY], call: (s, [key]) => s.get(key), reply: valueOrNothing };
const SET: StoreOpCodec<[string, Value | undefined, number | undefined], void> = {
  code: 1,
  name: 'set',
  fields: [KEY, BOXED, TTL],
  call: (s, [key, value, ttlMs]) => s.set(key, value as Value, ttlMs),
  reply: NOTHING.write,
};
const DELETE: StoreOpCodec<[string], void> = { code: 2, name: 'delete', fields: [KEY], call: (s, [key]) => s.delete(key), reply: NOTHING.write };
const COMPARE_AND_SET: StoreOpCodec<[string, Value | undefined, Value | undefined, number | undefined], boolean> = {
  code: 3,
  name: 'compareAndSet',
  fields: [KEY, BOXED, BOXED, TTL],
  call: (s, [key, expected, next, ttlMs]) => s.compareAndSet(key, expected, next, ttlMs),
  reply: VALUE.write,
};
// The window runs on the primary's clock, one clock for all workers: a worker's `now` does not cross.
const HIT: StoreOpCodec<[string, number, number], WindowResult> = {
  code: 4,
  name: 'hit',
  fields: [KEY, NUMBER, NUMBER],
  call: (s, [key, limit, windowMs], now) => s.hit(key, limit, windowMs, now()),
  reply: WINDOW.write,
};
const PEEK: StoreOpCodec<[string, number, number], WindowResult> = {
  code: 5,
  name: 'peek',
  fields: [KEY, NUMBER, NUMBER],
  call: (s, [key, limit, windowMs], now) => s.peek(key, limit, windowMs, now()),
  reply: WINDOW.write,
};
const RESET: StoreOpCodec<[string], void> = { code: 6, name: 'reset', fields: [KEY], call: (s, [key]) => s.reset(key), reply: NOTHING.write };

/** Every operation, by its number on the wire. */
export const STORE_OP_CODECS = [GET, SET, DELETE, COMPARE_AND_SET, HIT, PEEK, RESET] as const;
/** The operations' names, by their number on the wire. */
export const STORE_OPS = STORE_OP_CODECS.map((op) => op.name);

/** Appends the request `op(...args)` to a worker's list. */
export function writeRequest<Args extends unknown[]>(op: StoreOpCodec<Args, unknown>, args: Args, out: unknown[]): void {
  const fields = op.fields;
  out.push(op.code);
  for (let i = 0; i < fields.length; i++) out.push(fields[i]!.write(args[i]));
}

/**
 * The operation whose number stands at `list[at]`, or undefined when none does: that ends the
 * batch, since its fields cannot be told from the next request.
 */
export function requestOpAt(list: readonly unknown[], at: number): StoreOpCodec | undefined {
  const n = list[at];
  // Only a number names an operation: STORE_OP_CODECS['1'] would read as one too, and a request
  // left without a reply would shift every later reply onto the wrong request.
  return typeof n === 'number' ? (STORE_OP_CODECS as readonly StoreOpCodec[])[n] : undefined;
}

/** The fields of `op` at `list[at…]` (after its number); throws when one is malformed. */
export function readFields(op: StoreOpCodec, list: readonly unknown[], at: number): unknown[] {
  return op.fields.map((field, i) => field.read(list[at + i], op.name));
}
