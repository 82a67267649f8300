/**
 * Which objects and lists of a request's data came from the client, for natives that must not
 * take them for the route's own: an operator object in a record filter, the fields of a record
 * write. Known by identity: the data is walked once, on the first question (reading a body costs
 * nothing more, and a request that never asks walks nothing), and a source that appears later
 * (a body read after the first question) is walked when it does. The sets hold what the request
 * holds anyway, so they need not be weak.
 */
import type { RequestOrigin } from '../../plugins/contract.js';
import { HostObject, type Value } from '../values.js';

export class RequestOrigins {
  private readonly raw = new Set<object>();
  private readonly validated = new Set<object>();
  /** The sources walked so far, so a source is walked once. */
  private readonly walked = new Set<object>();

  /**
   * Where `value` came from. `raw` and `validated` are the request's current sources: what the
   * client sent as parsed, and what validation made of it (copies: validation never hands a
   * client's object on).
   */
  of(value: Value, raw: readonly Value[], validated: readonly Value[]): RequestOrigin {
    if (typeof value !== 'object' || value === null) return null;
    for (const source of raw) this.walk(source, this.raw);
    for (const source of validated) this.walk(source, this.validated);
    return this.raw.has(value) ? 'raw' : this.validated.has(value) ? 'validated' : null;
  }

  /** Adds every plain object and list of `source` to `into`; host values (uploads) are the runtime's own. */
  private walk(source: Value, into: Set<object>): void {
    if (typeof source !== 'object' || source === null || this.walked.has(source)) return;
    this.walked.add(source);
    const pending: object[] = [source];
    for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
      if (into.has(item)) continue;
      into.add(item);
      const children = Array.isArray(item) ? item : item instanceof HostObject ? [] : Object.values(item);
      for (const child of children) if (typeof child === 'object' && child !== null) pending.push(child);
    }
  }
}
