/**
 * Core logging: log() writes one line to the app log.
 */
import { toText } from '../../plugins/sdk.js';
import type { PluginApi } from '../../plugins/sdk.js';

/** Line breaks and other control characters a request could smuggle in to forge log lines. */
const CONTROL_CHARS = /[\u0000-\u0008\u000a-\u001f\u007f\u2028\u2029]/g;

/** Registers log. */
export function registerLog(rvm: PluginApi): void {
  rvm.native(
    'log',
    (ctx, ...values) => {
      const line = values.map((v) => toText(v ?? null)).join(' ');
      ctx.budget.chargeText(line.length);
      ctx.log(line.replace(CONTROL_CHARS, escapeControl));
      return null;
    },
    {
      params: [{ name: 'values', type: 'any', rest: true }],
      returns: 'null',
      doc: "Writes one line to the app log, tagged with the request id: the text form of each value joined by spaces; line breaks and control characters are escaped (\\n, \\u001b) so one call is always one line, and secrets show as '[secret]'.",
    },
  );
}

function escapeControl(c: string): string {
  if (c === '\n') return '\\n';
  if (c === '\r') return '\\r';
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}
