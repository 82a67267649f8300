/**
 * The few of node:http's private fields the server relies on, in one place: each is node's own
 * bookkeeping, not its API, so test/vm/runtime/http/node-internals.test.ts checks on every run
 * that the running Node still keeps them as read here, and fails loudly when an upgrade changes
 * them. Each use degrades safely when a field is gone (documented at each).
 */
import type http from 'node:http';
import type { Socket } from 'node:net';

/**
 * Marks a request's stream as already drained (`_dumped`), so node does not resume, end and
 * destroy it after the response (three ticks per request; ~6 % of a small GET's server time).
 * Only for a request without a body that nothing listens to. Without the field: a no-op, and node
 * drains as before.
 */
export function skipDrain(req: http.IncomingMessage): void {
  (req as http.IncomingMessage & { _dumped?: boolean })._dumped = true;
}

/**
 * The response that holds the connection now (`socket._httpMessage`): pipelined responses wait
 * behind it. Without the field: undefined, and the server defers every answer one microtask, as
 * it does for pipelined ones (correct, 3–4 % slower).
 */
export function connectionHolder(socket: Socket | null): unknown {
  return (socket as (Socket & { _httpMessage?: unknown }) | null)?._httpMessage;
}

/**
 * Whether a response of this connection has started writing (node's own rule for answering a
 * client error): then a parse error can only close the connection. Without the field: false, and
 * the error reply may follow a partial response on a connection that is being closed anyway.
 */
export function responseStarted(socket: Socket): boolean {
  return (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
}
