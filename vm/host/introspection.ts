/**
 * The running app as built-in endpoints see it (the API reference): its routes, guards, fields,
 * responses and types, and the endpoint function type.
 */
import type { Constant, FieldType, Literal } from '../lang.js';
import type { JsonSchema } from '../bytecode/module.js';
import type { Value } from '../values.js';
import type { AppSettings, CallContext, Halt } from './context.js';
import type { ErrorResponseSpec, SecuritySchemeSpec } from './natives.js';

/** A guard of a route as introspection shows it: what it is, what it takes and how it can answer. */
export interface GuardInfo {
  name: string;
  args: Literal[];
  mode: 'required' | 'optional';
  /** `plugin`: registered by a plugin; `app`: a `guard_definition` of the app. */
  source: 'plugin' | 'app';
  /** The plugin that registers it, or the `file:line` of its guard_definition. */
  origin: string;
  doc: string | null;
  /** OpenAPI security schemes, for guards that authenticate: any one of them lets the caller in. */
  security?: SecuritySchemeSpec[];
  /** An app guard's: the fields of the request's `state` it sets (`state.user = auth_user()`), which the handler may read. */
  state?: string[];
  /** The error responses it can end the request with. */
  responses: ErrorResponseSpec[];
}

/** One decorator of a field, as written and as documented. */
export interface DecoratorInfo {
  name: string;
  /** As written, folded: literals, and for @default also lists and objects. */
  args: Constant[];
  /** What a failing value is told ("must be at least 8 characters"); null for presence rules. */
  message: string | null;
  /** JSON Schema keywords it contributes. */
  schema: JsonSchema;
}

/** A field of a `validate {}` or `query {}` block. */
export interface FieldInfo {
  name: string;
  type: FieldType;
  optional: boolean;
  required: boolean;
  doc: string | null;
  line: number;
  decorators: DecoratorInfo[];
  /** The field's JSON Schema: its type plus every decorator's keywords. */
  schema: JsonSchema;
}

/** One response a route can produce, inferred from the code. */
export interface ResponseInfo {
  status: number;
  source: string;
  contentType: string | null;
  schema: JsonSchema;
  line: number;
}

/** A route as the server runs it: everything the API reference shows. */
export interface RouteInfo {
  method: string;
  /** As written: `/users/:id`. */
  path: string;
  /** OpenAPI style: `/users/{id}`. */
  openapiPath: string;
  params: string[];
  file: string;
  line: number;
  doc: string | null;
  guards: GuardInfo[];
  body: FieldInfo[] | null;
  query: FieldInfo[] | null;
  responses: ResponseInfo[];
  /** The natives it calls (itself or through its `fn`s) that declare error responses or headers, for the reference. */
  natives?: CalledNativeInfo[];
  /** The `_middleware.rvm` blocks around it, outermost first: they answer before it can (a 401). */
  middleware?: MiddlewareInfo[];
}

/** A `middleware { }` block around a route, with what it can answer instead of the route. */
export interface MiddlewareInfo {
  /** Its file: `api/_middleware.rvm`. */
  file: string;
  line: number;
  doc: string | null;
  /** Its own answers and those of the `fn`s it calls. */
  responses: ResponseInfo[];
  /** The natives it calls that declare error responses, headers or schemes (auth_user()). */
  natives: CalledNativeInfo[];
  /**
   * The schemes it lets a caller in by, any one of them: those of the natives it calls and, when
   * it answers 401, the headers and cookies it reads (Authorization is a bearer token).
   */
  security: SecuritySchemeSpec[];
}

/** A native a route calls, with what calling it can answer and the headers it adds. */
export interface CalledNativeInfo {
  name: string;
  responses: ErrorResponseSpec[];
  headers: string[];
  /** The schemes it authenticates by (NativeMeta.security); empty for most. */
  security: SecuritySchemeSpec[];
  /** The schemes whose credential it hands out (NativeMeta.issues); empty for most. */
  issues: string[];
}

/** A `type` declaration of the app, as the API reference shows it. */
export interface TypeInfo {
  name: string;
  file: string;
  line: number;
  doc: string | null;
  /** Every declared field, `@hidden` ones included (their decorators say so). */
  fields: FieldInfo[];
}

/** A problem found compiling the app (`file:line:col`, code, message, hint). */
export interface DiagnosticInfo {
  file: string;
  line: number;
  col: number;
  severity: 'error' | 'warning';
  code: string;
  message: string;
  hint?: string;
  sourceLine?: string;
}

/** The running app, for built-in endpoints such as the API reference. */
export interface AppIntrospection {
  readonly settings: AppSettings;
  /** The routes being served now (after the last good reload). */
  routes(): readonly RouteInfo[];
  /** Errors of the last reload when it failed (the previous version keeps serving); else empty. */
  errors(): readonly DiagnosticInfo[];
  /** The app's `type` declarations, sorted by name; absent where types are not known (as none). */
  types?(): readonly TypeInfo[];
  /**
   * Plugin files of the app changed since this process loaded them (dev mode), relative to the app
   * folder: plugins load once per process, so the app runs their old code until `rvm run` restarts.
   * Absent or empty when there are none.
   */
  restartNeeded?(): readonly string[];
  /** Grows by one at every reload attempt and when restartNeeded() changes; caches key on it. */
  readonly generation: number;
  /** Calls `listener` after every reload attempt; returns the unsubscribe function. */
  onReload(listener: () => void): () => void;
}

/** A built-in endpoint under `/_app/`: answers like a native (`ctx.respond`, `ctx.fail`, `ctx.stream`). */
export type EndpointFn = (ctx: CallContext, app: AppIntrospection) => Value | Halt | void | Promise<Value | Halt | void>;

export interface EndpointMeta {
  /** Methods it answers; GET (and HEAD) by default. */
  methods?: string[];
  doc: string;
}
