/**
 * Core JSON natives: json_parse and json_stringify.
 */
import { MAX_JSON_VALUE_DEPTH, RUNTIME, RvmError, checkLength, parseJsonValue } from '../../plugins/sdk.js';
import type { PluginApi } from '../../plugins/sdk.js';

/** Registers json_parse and json_stringify. */
export function registerJson(rvm: PluginApi): void {
  rvm.native('json_parse', (ctx, text) => parseJsonValue('json_parse', text, ctx.budget), {
    params: [{ name: 's', type: 'text' }],
    returns: 'any',
    doc: `Parses JSON text into a value; malformed JSON, or nesting deeper than ${MAX_JSON_VALUE_DEPTH} levels, is an invalid_json error.`,
  });

  rvm.native(
    'json_stringify',
    (ctx, v, indent) => {
      const spaces = indent ?? 0;
      if (spaces < 0 || spaces > MAX_JSON_INDENT) {
        throw new RvmError(`json_stringify(): indent must be 0 to ${MAX_JSON_INDENT}, got ${spaces}`, RUNTIME.invalid_argument);
      }
      const compact = stringify(v, 0);
      ctx.budget.chargeText(compact.length);
      if (spaces === 0) return checkLength('json_stringify', compact);
      // Indentation grows with depth times lines: a small deep value can indent to gigabytes,
      // so the indented length is counted on the compact text before anything is built.
      const length = checkLength('json_stringify', indentedLength(compact, spaces));
      ctx.budget.chargeText(length);
      return stringify(v, spaces);
    },
    {
      params: [
        { name: 'v', type: 'any' },
        { name: 'indent', type: 'int', optional: true, doc: `spaces per level, 0 (compact, the default) to ${MAX_JSON_INDENT}` },
      ],
      returns: 'text',
      doc: `The JSON text of a value (host objects as they appear in responses, secrets as "[secret]"): compact, or with each item on its own line indented by \`indent\` spaces per level and a space after each colon, as JSON.stringify and Python's json.dumps write it. A value that contains itself, or an indent outside 0..${MAX_JSON_INDENT}, is an invalid_argument error.`,
    },
  );
}

/** Widest indent json_stringify takes, JSON.stringify's own ceiling. */
export const MAX_JSON_INDENT = 10;

function stringify(v: unknown, indent: number): string {
  try {
    // Host objects (headers, records, secrets) serialise through their own toJSON.
    return JSON.stringify(v ?? null, null, indent);
  } catch (error) {
    // A lambda's toJSON refuses with its own code (not_data).
    if (error instanceof RvmError) throw error;
    throw new RvmError(`json_stringify(): ${(error as Error).message}`, RUNTIME.invalid_argument);
  }
}

/**
 * The length of compact JSON once indented as JSON.stringify does: a non-empty list or object
 * opens, separates and closes its items with a line break and the indentation of their depth,
 * and a key's colon gains a space.
 */
export function indentedLength(compact: string, indent: number): number {
  let length = compact.length;
  let depth = 0;
  for (let i = 0; i < compact.length; i++) {
    const c = compact[i];
    if (c === '"') {
      // Skip the string: its brackets, commas and colons are text.
      for (i++; compact[i] !== '"'; i++) if (compact[i] === '\\') i++;
    } else if (c === '[' || c === '{') {
      const next = compact[i + 1];
      if (next === ']' || next === '}') i++;
      else length += 1 + indent * ++depth;
    } else if (c === ']' || c === '}') length += 1 + indent * --depth;
    else if (c === ',') length += 1 + indent * depth;
    else if (c === ':') length += 1;
  }
  return length;
}
