/**
 * The stored user behind a token (spec/plugins/auth.md): the app's `User` record whose id is the
 * token's `sub`, read through the SDK's stored records, in its JSON form (`@hidden` fields left
 * out) so that auth_user() merges only what a response may show.
 *
 * Sign-in fails closed: once the app has a `User` type, a token whose `sub` is a record id (a
 * UUID) stands for that record. A record that is gone is no user, and a read that fails answers
 * the request (503 `database_unavailable`) instead of trusting the token's claims, which may be
 * stale (a demoted admin's `role`). A `sub` of another shape cannot name a record: the app minted
 * that token for a principal it keeps elsewhere (the showcase's demo accounts, a service), and the
 * claims are that principal, as in an app without users; the store is not asked.
 */
import { HALT, HostObject, fromJson, type StoredRecords, type Value, type ValueObject } from '../../plugins/sdk.js';
import { CLAIMS_ONLY, type StoredUserLookup } from './session.js';

/** The record type whose records are the app's users. */
export const USER_TYPE = 'User';

/** Record ids are UUIDs: a `sub` of another shape names no record, so the store is not asked. */
const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The lookup auth_user() merges over the claims; null when the plugin API reads no records. */
export function storedUserLookup(records: StoredRecords | undefined): StoredUserLookup | null {
  if (records === undefined) return null;
  return (ctx, claims) => {
    // Asked at each call: the types change when the app reloads.
    if (!records.declares(USER_TYPE)) return CLAIMS_ONLY;
    const sub = claims.sub;
    if (typeof sub !== 'string' || !UUID_SHAPE.test(sub)) return CLAIMS_ONLY;
    const found = records.find(ctx, USER_TYPE, sub);
    return found instanceof Promise ? found.then(jsonForm) : jsonForm(found);
  };
}

/** A record's JSON form as a plain object; HALT (the read failed and answered) passes on; anything else (null: no such record) is no user. */
function jsonForm(value: Value | unknown): ValueObject | null | typeof HALT {
  if (value === HALT) return HALT;
  if (!(value instanceof HostObject)) return null;
  const json = fromJson(value.toJSON());
  return json !== null && typeof json === 'object' && !Array.isArray(json) && !(json instanceof HostObject) ? (json as ValueObject) : null;
}
