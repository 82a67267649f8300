/**
 * Which objects and lists of a request's data came from the client, for natives that must not
 * take them for the route's own: an operator object in a record filter, the fields of a record
 * write. Known by identity, on demand: reading a body costs nothing more, and a request that
 * never asks walks nothing. A question searches the request's data; data larger than
 * SEARCH_LIMIT is indexed once instead (a loop writing records from a large body then asks in
 * constant time), and a source that appears later (a body read after the index was made) is
 * added when it does.
 */
import type { RequestOrigin } from '../host/context.js';
import { HostObject, type Value } from '../values.js';

/** Values a question visits before the request's data counts as large and is indexed. */
export const SEARCH_LIMIT = 256;

type Origin = Exclude<RequestOrigin, null>;

export class RequestOrigins {
  /** Every object and list of the data, by origin; null while searching suffices. */
  private index: Map<object, Origin> | null = null;
  /** What the current search may still visit. */
  private left = 0;

  /**
   * Where `value` came from. `raw` and `validated` are the request's current sources: what the
   * client sent as parsed, and what validation made of it (copies: validation never hands a
   * client's object on). Raw wins where a source is both (`body` of a route without `validate`).
   */
  of(value: Value, raw: readonly Value[], validated: readonly Value[]): RequestOrigin {
    if (typeof value !== 'object' || value === null) return null;
    if (this.index === null) {
      this.left = SEARCH_LIMIT;
      const inRaw = this.searchAll(raw, value);
      if (inRaw === true) return 'raw';
      const inValidated = inRaw === false ? this.searchAll(validated, value) : undefined;
      if (inValidated !== undefined) return inValidated ? 'validated' : null;
      this.index = new Map();
    }
    for (const source of raw) this.add(source, 'raw');
    for (const source of validated) this.add(source, 'validated');
    return this.index.get(value) ?? null;
  }

  /** Whether one of `sources` is or holds `value`; undefined when the search ran out of SEARCH_LIMIT first. */
  private searchAll(sources: readonly Value[], value: object): boolean | undefined {
    for (const source of sources) {
      const held = this.holds(source, value);
      if (held !== false) return held;
    }
    return false;
  }

  /** Whether `node` is or holds `value`, visiting no more than `left` objects and lists (no allocation: the common question is about a small body). */
  private holds(node: Value, value: object): boolean | undefined {
    if (typeof node !== 'object' || node === null || node instanceof HostObject) return false;
    if (node === value) return true;
    if (--this.left < 0) return undefined;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const held = this.holds(node[i]!, value);
        if (held !== false) return held;
      }
    } else {
      for (const key in node) {
        const held = this.holds(node[key]!, value);
        if (held !== false) return held;
      }
    }
    return false;
  }

  /** Adds `source` and every object and list inside it to the index, unless it is there already. */
  private add(source: Value, origin: Origin): void {
    const index = this.index!;
    if (typeof source !== 'object' || source === null || index.has(source)) return;
    const pending: object[] = [source];
    for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
      if (index.has(item) || item instanceof HostObject) continue;
      index.set(item, origin);
      for (const child of Array.isArray(item) ? item : Object.values(item)) if (typeof child === 'object' && child !== null) pending.push(child);
    }
  }
}
