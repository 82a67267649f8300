/**
 * Core logging: log() writes one line to the app log.
 */
import { encodeLogText, toText } from '../../plugins/sdk.js';
import type { PluginApi } from '../../plugins/sdk.js';

/** Registers log. */
export function registerLog(rvm: PluginApi): void {
  rvm.native(
    'log',
    (ctx, ...values) => {
      const line = values.map((v) => toText(v ?? null)).join(' ');
      ctx.budget.chargeText(line.length);
      // Encoded here too, not only by the logger: ctx.log's other listeners (tests, embedders) get the line as the log shows it.
      ctx.log(encodeLogText(line));
      return null;
    },
    {
      params: [{ name: 'values', type: 'any', rest: true }],
      returns: 'null',
      doc: "Writes one line to the app log, tagged with the request id: the text form of each value joined by spaces; line breaks and control characters are escaped (\\n, \\t, \\x1b) so one call is always one line, and secrets show as '[secret]'.",
    },
  );
}
