/**
 * The stored user behind a token (DESIGN §6 auth): the app's `User` record whose id is the
 * token's `sub`, read through the SDK's stored records, in its JSON form (`@hidden` fields left
 * out) so that auth_user() merges only what a response may show.
 */
import { HostObject, fromJson, type StoredRecords, type Value, type ValueObject } from '../../plugins/sdk.js';
import type { StoredUserLookup } from './session.js';

/** The record type whose records are the app's users. */
export const USER_TYPE = 'User';

/** Record ids are UUIDs: a `sub` of another shape names no record, so the store is not asked. */
const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The lookup auth_user() merges over the claims; null when the plugin API reads no records. */
export function storedUserLookup(records: StoredRecords | undefined): StoredUserLookup | null {
  if (records === undefined) return null;
  return (ctx, claims) => {
    const sub = claims.sub;
    if (typeof sub !== 'string' || !UUID_SHAPE.test(sub)) return null;
    const found = records.find(ctx, USER_TYPE, sub);
    return found instanceof Promise ? found.then(jsonForm) : jsonForm(found);
  };
}

/** A record's JSON form as a plain object; anything else (null: no such record) is no user. */
function jsonForm(value: Value | unknown): ValueObject | null {
  if (!(value instanceof HostObject)) return null;
  const json = fromJson(value.toJSON());
  return json !== null && typeof json === 'object' && !Array.isArray(json) && !(json instanceof HostObject) ? (json as ValueObject) : null;
}
