/**
 * Keyset cursors for `T.page`: opaque base64url text holding the order a page was made for and
 * the order-key values and id of its last row, then `.` and its signature under the app secret.
 * A cursor is request input: garbage, a cursor made for another order, one too long, or one not
 * signed by this app (forged, or its values changed) is an InvalidQueryError, never another kind
 * of exception, so a client can only hand back the cursors it was given. Its values are never
 * `@hidden` ones: no order may name a hidden field.
 */
import { constantTimeEqual, signText } from '../../plugins/sdk.js';
import { InvalidQueryError, type OrderKey, type Row, type StoredValue } from './store.js';

/** The longest cursor accepted: a page's keys are a few short values, and decoding is bounded work. */
export const MAX_CURSOR_LENGTH = 4096;

/**
 * The order a query really runs in: the given keys up to the first `id` (later keys cannot
 * change a total order), each field once, and `id` last when not already there, in the direction
 * of the key before it (ascending when there is none). Ids are time-ordered (UUIDv7), so
 * `'-created_at'` breaks ties newest first too, and an index on the keys then `id` serves the
 * whole order, read in one direction.
 */
export function effectiveOrder(order: readonly OrderKey[]): OrderKey[] {
  const out: OrderKey[] = [];
  const seen = new Set<string>();
  for (const key of order) {
    if (seen.has(key.field)) continue;
    seen.add(key.field);
    out.push({ field: key.field, desc: key.desc === true });
    if (key.field === 'id') return out;
  }
  out.push({ field: 'id', desc: out.at(-1)?.desc ?? false });
  return out;
}

function signature(order: readonly OrderKey[]): string {
  return effectiveOrder(order)
    .map((k) => (k.desc ? `-${k.field}` : k.field))
    .join(',');
}

/** What a cursor's signature covers: its purpose, so no other signed text passes for a cursor. */
function signed(secret: string, payload: string): string {
  return signText(secret, `records.cursor!${payload}`);
}

/** The cursor after `row` in `order` (a page's last row), signed with `secret` (the app secret). */
export function encodeCursor(order: readonly OrderKey[], row: Row, secret: string): string {
  const keys = effectiveOrder(order);
  const values = keys.map((k) => row[k.field] ?? null);
  const payload = Buffer.from(JSON.stringify({ o: signature(order), v: values }), 'utf8').toString('base64url');
  return `${payload}.${signed(secret, payload)}`;
}

const SIGNED_CURSOR = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/;

/** The `after` values of a cursor this app signed for `order`, or an InvalidQueryError. */
export function decodeCursor(cursor: unknown, order: readonly OrderKey[], secret: string): StoredValue[] {
  const bad = (why: string): never => {
    throw new InvalidQueryError(`invalid cursor: ${why}`);
  };
  if (typeof cursor !== 'string' || cursor === '') return bad('not a cursor text');
  if (cursor.length > MAX_CURSOR_LENGTH) return bad(`longer than ${MAX_CURSOR_LENGTH} characters`);
  const parts = SIGNED_CURSOR.exec(cursor);
  if (parts === null) return bad('not a cursor text');
  const [, payload, mac] = parts as unknown as [string, string, string];
  if (!constantTimeEqual(mac, signed(secret, payload))) return bad('not made by this app');
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return bad('damaged');
  }
  if (typeof decoded !== 'object' || decoded === null || Array.isArray(decoded)) return bad('damaged');
  const { o, v } = decoded as { o?: unknown; v?: unknown };
  if (typeof o !== 'string' || !Array.isArray(v)) return bad('damaged');
  if (o !== signature(order)) return bad('it was made for another order');
  if (v.length !== effectiveOrder(order).length) return bad('damaged');
  return v as StoredValue[];
}
