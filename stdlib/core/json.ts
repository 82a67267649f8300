/**
 * Core JSON natives: json_parse and json_stringify.
 */
import { MAX_JSON_DEPTH, RUNTIME, RvmError, checkLength, parseJsonValue } from '../../plugins/sdk.js';
import type { PluginApi } from '../../plugins/sdk.js';

/** Registers json_parse and json_stringify. */
export function registerJson(rvm: PluginApi): void {
  rvm.native('json_parse', (ctx, text) => parseJsonValue('json_parse', text, ctx.budget), {
    params: [{ name: 's', type: 'text' }],
    returns: 'any',
    doc: `Parses JSON text into a value; malformed JSON, or nesting deeper than ${MAX_JSON_DEPTH} levels, is an invalid_json error.`,
  });

  rvm.native(
    'json_stringify',
    (ctx, v) => {
      let text: string;
      try {
        // Host objects (headers, records, secrets) serialise through their own toJSON.
        text = JSON.stringify(v ?? null);
      } catch (error) {
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
