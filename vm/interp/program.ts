/**
 * A linked program: every chunk of every module of an app, with call sites bound to chunk and
 * native indices. Built once per (re)load by link.ts; the interpreter only ever sees this, and
 * the host it is given for one execution (`VmHost`), which the runtime implements.
 */
import type { ChunkData, RouteMeta } from '../bytecode/module.js';
import type { CallContext, Halt } from '../host/context.js';
import type { NativeFn } from '../host/natives.js';
import type { Value } from '../values.js';

export interface LinkedChunk {
  data: ChunkData;
  /** Source file (relative to the app) for runtime error locations. */
  file: string;
  /** The chunk's code with CALL rewritten into CALL_FN / CALL_NATIVE. */
  code: Int32Array;
  consts: Value[];
  /** The route this chunk runs, for VALIDATE. */
  route: RouteMeta | null;
  /** Its calls are bound; until then (lazy linking) data, code and consts are placeholders. */
  bound: boolean;
}

/**
 * The host side of one execution: a CallContext plus the request-scoped values the VM reads and
 * the steps it hands to the host (reading the body, validation, answering). The machine hands
 * over the values as the program computed them; the host checks and applies them.
 */
export interface VmHost extends CallContext {
  requestValue(): Value;
  paramsValue(): Value;
  queryValue(): Value;
  responseValue(): Value;
  /** The request's `state`: an object of its own, empty at first, that middleware, guards and the handler share. */
  stateValue(): Value;
  /** The value of the ambient `body` (the raw body, or the validated fields after VALIDATE). */
  body: Value;
  /**
   * READ_BODY: reads and parses the request body unless that was done (then undefined, at once);
   * HALT when the body was refused and the request answered (400, 413, 415, 503).
   */
  readBody(): void | Halt | Promise<void | Halt>;
  /** VALIDATE: runs `route`'s `validate` (section 0) or `query` (section 1) block; HALT when it refused the request. */
  validate(route: RouteMeta, section: number): void | Halt | Promise<void | Halt>;
  /** RESPOND: answers with the `response { }` statement's object; throws an RvmError when the host refuses it. */
  respondStatement(fields: Value): Halt;
  /** FAIL: answers with the `fail` statement's status and message (null when none); throws an RvmError when the host refuses them. */
  failStatement(status: Value, message: Value): Halt;
}

export interface Program {
  chunks: LinkedChunk[];
  natives: NativeFn[];
  nativeNames: string[];
  /** Binds an unbound chunk and every chunk it can call (lazy linking); throws when that fails. */
  prepare(chunk: number): void;
}
