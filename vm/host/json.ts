/**
 * JSON text into language values, as natives take it in (`json_parse`, `http_fetch`'s answers):
 * parsed, refused when it nests too deep to walk, charged by its size, copied proto-safe.
 */
import { RvmError, fromJson, type Value } from '../values.js';
import { RUNTIME } from '../errors.js';
import type { NativeBudget } from './context.js';

/**
 * Deepest nesting of a language value read from JSON text (json_parse, http_fetch; request
 * bodies have their own bound, MAX_JSON_DEPTH in body.ts). Real documents nest a handful of
 * levels; the limit keeps recursive walkers (equality, text form, responses) far from Node's
 * stack limit.
 */
export const MAX_JSON_VALUE_DEPTH = 512;

/**
 * The value of JSON `text`, charged to `budget` (the text, then each value three times: the
 * parse, the depth walk and the copy). Malformed JSON, or JSON nested deeper than
 * MAX_JSON_VALUE_DEPTH, is an `invalid_json` error naming `fn`.
 */
export function parseJsonValue(fn: string, text: string, budget: NativeBudget): Value {
  budget.chargeText(text.length);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new RvmError(`${fn}(): ${(error as Error).message}`, RUNTIME.invalid_json);
  }
  const nodes = nestedDeeperThan(data, MAX_JSON_VALUE_DEPTH);
  if (nodes < 0) throw new RvmError(`${fn}(): nested deeper than ${MAX_JSON_VALUE_DEPTH} levels`, RUNTIME.invalid_json);
  budget.chargeItems(3 * nodes);
  // fromJson rebuilds objects key by key as data, so "__proto__" stays an ordinary key.
  return fromJson(data);
}

/**
 * The number of values in the parsed data, or -1 when it nests deeper than `limit`. Walks
 * without recursion, so a hostile document cannot exhaust the stack here.
 */
function nestedDeeperThan(root: unknown, limit: number): number {
  const stack: { value: unknown; depth: number }[] = [{ value: root, depth: 1 }];
  let nodes = 1;
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth > limit) return -1;
    const children = Array.isArray(value) ? value : Object.values(value);
    nodes += children.length;
    for (const child of children) if (child !== null && typeof child === 'object') stack.push({ value: child, depth: depth + 1 });
  }
  return nodes;
}
