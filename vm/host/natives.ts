/**
 * Natives and guards as plugins declare them: their parameters (checked before the body runs,
 * checked-native.ts), their metadata for `rvm check` and the reference, and the function types.
 */
import type { Literal } from '../lang.js';
import type { JsonSchema } from '../bytecode/module.js';
import type { HostObject, Lambda, Value, ValueObject } from '../values.js';
import type { AppSettings, CallContext, Halt } from './context.js';

/**
 * The type a parameter expects. A native's arguments are checked against it before its body
 * runs (a `type_error` naming the native and the parameter), unless the parameter is
 * `selfChecked`; `any` checks nothing.
 */
export type ParamType = 'text' | 'int' | 'number' | 'bool' | 'list' | 'object' | 'lambda' | 'any';

/**
 * What an argument of each type is once checked: `number` is finite, `int` a whole number,
 * `object` a plain object or a host object with keys (`request.headers`).
 */
export interface ParamValues {
  text: string;
  int: number;
  number: number;
  bool: boolean;
  list: Value[];
  object: ValueObject | HostObject;
  /** Called through `ctx.call`. */
  lambda: Lambda;
  any: Value;
}

export interface ParamSpec {
  name: string;
  type?: ParamType;
  /** May be left out (trailing parameters only). */
  optional?: boolean;
  /** Takes any number of further arguments. */
  rest?: boolean;
  /**
   * The native checks this argument itself and receives it as it came: for a parameter that
   * also takes other values (a secret for text) or answers a wrong one with its own error code.
   * `type` still documents what it expects.
   */
  selfChecked?: boolean;
  /** For a parameter that takes a lambda: the arguments the native calls it with; a lambda written in the call with another parameter count is E_ARITY. */
  arity?: number;
  doc?: string;
}

export interface NativeMeta {
  params: ParamSpec[];
  /** Type of the result for `rvm check` and the reference: `text`, `bool`, `object`, ... */
  returns?: string;
  doc: string;
  /** `middleware`: callable only inside a `middleware { }` block (e.g. `next()`). */
  scope?: 'middleware';
  /** Error responses calling it can end the request with (`auth_user()` → 401), for the reference. */
  responses?: ErrorResponseSpec[];
  /** Headers calling it adds to whatever the route answers (`Set-Cookie`), for the reference. */
  headers?: string[];
  /**
   * The schemes it authenticates the caller by, any one of them (`auth_user()`): a
   * `guard_definition` that calls it, itself or through its `fn`s, requires them.
   */
  security?: SecuritySchemeSpec[];
  /** The schemes whose credential it hands out (`jwt_create()`: `bearerAuth`): the document names the routes that call it. */
  issues?: string[];
}

export type NativeFn = (ctx: CallContext, ...args: Value[]) => Value | Halt | Promise<Value | Halt>;

/** The value one declared parameter gives the body: its checked type, `Value` when untyped or self-checked. */
export type ParamValue<P extends ParamSpec> = P extends { selfChecked: true } ? Value : P['type'] extends ParamType ? ParamValues[P['type']] : Value;

/**
 * The arguments a native's body receives for parameters declared as a literal list: each of its
 * checked type, optional ones possibly null or left out, a rest one as the rest. Parameters not
 * known literally give `Value[]`.
 */
export type NativeArgs<P extends readonly ParamSpec[]> = P extends readonly [infer H extends ParamSpec, ...infer T extends readonly ParamSpec[]]
  ? H extends { rest: true }
    ? ParamValue<H>[]
    : H extends { optional: true }
      ? [(ParamValue<H> | null)?, ...NativeArgs<T>]
      : [ParamValue<H>, ...NativeArgs<T>]
  : P extends readonly []
    ? []
    : Value[];

/** A native as its author writes it: the body sees its arguments already checked against `params`. */
export type CheckedNativeFn<P extends readonly ParamSpec[]> = (ctx: CallContext, ...args: NativeArgs<P>) => Value | Halt | Promise<Value | Halt>;

/** How a guard is used on a route. */
export interface GuardUse {
  mode: 'required' | 'optional';
}

/** A guard lets the request through by returning, or ends it with `return ctx.fail(...)`. */
export type GuardFn = (ctx: CallContext, args: Value[], use: GuardUse) => void | Halt | Promise<void | Halt>;

/** An error a guard or validator can produce, for the reference and OpenAPI. */
export interface ErrorResponseSpec {
  status: number;
  code: string;
  description: string;
  headers?: string[];
}

export interface GuardMeta {
  params: ParamSpec[];
  doc: string;
  /**
   * Checks a use's constant arguments at load (`rate_limit(0, 60)`, `ip('10.0.0.0/33')`): a
   * message makes it a compile error instead of a 500 on the first request.
   */
  checkArgs?(args: readonly Literal[]): string | null;
  /**
   * What the app must configure for the guard to work (a key, a list of keys): a message makes a
   * warning at each use (`rvm check`, the start of `rvm run`), before requests answer 500.
   */
  checkSetup?(app: AppSettings): string | null;
  /** OpenAPI security scheme this guard implements, if any; a list when any one of them lets the caller in. */
  security?: SecuritySchemeSpec | SecuritySchemeSpec[];
  responses?: ErrorResponseSpec[];
}

/** An OpenAPI security scheme under the name the document's components list it by. */
export interface SecuritySchemeSpec {
  name: string;
  /** The Security Scheme Object; its `description` says where the credential comes from. */
  scheme: JsonSchema;
}
