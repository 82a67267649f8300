/**
 * Core natives reading the request as it arrived: `sent(field)`, which tells a field the client
 * sent (null included) from one it left out — what a PATCH needs, since a `validate` block's
 * `body` reads both as null (or as the field's `@default`).
 */
import { isPlainObject } from '../../plugins/sdk.js';
import type { PluginApi, Value } from '../../plugins/sdk.js';

/** Registers sent. */
export function registerRequest(rvm: PluginApi): void {
  rvm.native(
    'sent',
    (ctx, field) => {
      const raw = ctx.request.body;
      return isPlainObject(raw as Value) && Object.hasOwn(raw as object, field);
    },
    {
      params: [{ name: 'field', type: 'text' }],
      returns: 'bool',
      doc: "True when the request's body (JSON or form) has the field, whatever its value — null included; false when the client left it out. In a PATCH with a validate block, body.x reads null both for a field sent as null and for one not sent: sent('x') tells them apart (if sent('assignee') { task.assignee = body.assignee }).",
    },
  );
}
