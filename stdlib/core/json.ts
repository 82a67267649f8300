/**
 * Core JSON natives: json_parse and json_stringify.
 */
import { RUNTIME, RvmError, checkLength, fromJson } from '../../plugins/sdk.js';
import type { PluginApi } from '../../plugins/sdk.js';

/**
 * Deepest nesting json_parse accepts. Real documents nest a handful of levels; the limit keeps
 * recursive walkers (equality, text form, responses) far from Node's stack limit.
 */
export const MAX_JSON_DEPTH = 512;

/** Registers json_parse and json_stringify. */
export function registerJson(rvm: PluginApi): void {
  rvm.native(
    'json_parse',
    (ctx, text) => {
      ctx.budget.chargeText(text.length);
      let data: unknown;
      try {
        data = JSON.parse(text);
      } catch (error) {
        throw new RvmError(`json_parse(): ${(error as Error).message}`, RUNTIME.invalid_json);
      }
      const nodes = nestedDeeperThan(data, MAX_JSON_DEPTH);
      if (nodes < 0) throw new RvmError(`json_parse(): nested deeper than ${MAX_JSON_DEPTH} levels`, RUNTIME.invalid_json);
      // Parsing, the walk and the copy each visit every value.
      ctx.budget.chargeItems(3 * nodes);
      // fromJson rebuilds objects key by key as data, so "__proto__" stays an ordinary key.
      return fromJson(data);
    },
    {
      params: [{ name: 's', type: 'text' }],
      returns: 'any',
      doc: `Parses JSON text into a value; malformed JSON, or nesting deeper than ${MAX_JSON_DEPTH} levels, is an invalid_json error.`,
    },
  );

  rvm.native(
    'json_stringify',
    (ctx, v) => {
      let text: string;
      try {
        // Host objects (headers, records, secrets) serialise through their own toJSON.
        text = JSON.stringify(v ?? null);
      } catch (error) {
        // A lambda's toJSON refuses with its own code (not_data).
        if (error instanceof RvmError) throw error;
        throw new RvmError(`json_stringify(): ${(error as Error).message}`, RUNTIME.invalid_argument);
      }
      ctx.budget.chargeText(text.length);
      return checkLength('json_stringify', text);
    },
    {
      params: [{ name: 'v', type: 'any' }],
      returns: 'text',
      doc: 'The compact JSON text of a value (host objects as they appear in responses, secrets as "[secret]"); a value that contains itself is an invalid_argument error.',
    },
  );
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
