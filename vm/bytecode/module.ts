/**
 * The compiled form of one route file: a versioned header, its chunks of bytecode and the route
 * metadata the runtime and the API reference read. This is exactly what the msgpack artefact
 * stores (vm/bytecode/artefact.ts); nothing here refers to plugins except by name.
 */
import type { Constant, FieldType, HttpMethod, Literal, PathSegment } from '../lang.js';

/**
 * Bumped whenever the shape of CompiledModule, the meaning of an opcode or what a cached artefact
 * vouches for changes. 4: the cache holds only modules whose validation was checked clean. 5: READ_BODY,
 * the request body is read after a route's guards. 6: a `fn` carries the responses it can answer.
 * 7: decorator arguments may be lists and objects (`@default([])`). 8: record call references
 * (`save`, `delete`, `transaction`) and the argument shapes of `Name.method(...)` calls.
 * 9: the argument shape `r`, the request's data as the client sent it (a cached module without
 * it would skip the check of record writes). 10: the ambient `state` (LOAD_AMBIENT 5).
 * 11: `middlewareMeta`, what the reference shows of a `middleware { }` block (a cached module
 * without it would leave the block's answers out of the OpenAPI document), and a fn's `returns`,
 * the schema of what it returns (the routes that answer its result document it), and the `state`
 * fields a guard sets. 12: POW, JUMP_IF_NULL, DUP2 and THROW (`**`, `?.`, compound assignment, `throw`);
 * lambdas and comprehensions (MAKE_LAMBDA, CALL_VALUE, APPEND, ITER_LIST, `lambda` chunks).
 */
export const FORMAT_VERSION = 12;
/** First field of every artefact and bundle. */
export const ARTEFACT_MAGIC = 'rvm-module';
export const BUNDLE_MAGIC = 'rvm-bundle';

export interface ArtefactHeader {
  magic: typeof ARTEFACT_MAGIC;
  format: number;
  /** Version of the compiler that wrote it (package version). */
  compiler: string;
  /** sha256 (hex) of the source text the module was compiled from. */
  sourceHash: string;
  /** Fingerprint of the plugin set (names and versions) at compile time. */
  plugins: string;
}

export type ChunkKind = 'route' | 'fn' | 'guard' | 'middleware' | 'lambda';

/**
 * A call site the compiler could not bind: `kind: 'call'` for `f(...)` / `response.ok(...)`,
 * `'const'` for a constant another file declares (argc 0; the loader binds it to its value),
 * `'guard'` for a guard use, `'record'` for a step of a records statement (`save`, `delete`,
 * `transaction.begin`, `transaction.commit`, `transaction.rollback`), which the record provider
 * answers. The loader binds each to a native or a chunk once, checking arity.
 */
export interface CallRef {
  name: string;
  kind: 'call' | 'guard' | 'record' | 'const';
  argc: number;
  line: number;
  col: number;
  /** Guards only: `auth: optional` authenticates when it can and never rejects. */
  mode?: 'required' | 'optional';
  /**
   * `Name.method(...)` calls only: what the compiler knows of each argument, so the linker can
   * check constant filters and options against a record type. Absent when nothing is known.
   */
  args?: ArgShape[];
  /** The arguments that are lambdas written in the call, as [argument index, parameter count] pairs: the linker checks them against a native's. */
  lambdas?: [number, number][];
}

/**
 * What is known at compile time of one call argument: a constant (`c`), an object literal some
 * of whose values are not constants (`o`: its entries in order), a list literal likewise (`l`),
 * the request's data as the client sent it (`r`: `request.body`, or `body` unvalidated; `s` as
 * written), or nothing (`u`).
 */
export type ArgShape = { k: 'c'; v: Constant } | { k: 'o'; e: [string, ArgShape][] } | { k: 'l'; i: ArgShape[] } | { k: 'r'; s: string } | { k: 'u' };

export interface ChunkData {
  /** Human name for listings and errors: `route GET /users/:id`, `fn slugify`, `guard min_age`, `lambda at 12:20`. */
  name: string;
  kind: ChunkKind;
  /** Parameters; they occupy the first slots (a lambda's captured locals follow them). */
  arity: number;
  /** Local slots, parameters included. */
  slots: number;
  /** Deepest operand stack the chunk needs beyond its slots (computed from the opcode table). */
  maxStack: number;
  code: Int32Array;
  consts: Literal[];
  /** Line table: triples (code offset, line, col), one per instruction whose position changes. */
  lines: Int32Array;
  refs: CallRef[];
}

/** A JSON Schema (2020-12 / OpenAPI 3.1 dialect) as plain data. */
export type JsonSchema = { [keyword: string]: unknown };

export interface DecoratorMeta {
  name: string;
  /** Arguments folded to constants at compile time; lists and objects of constants included. */
  args: Constant[];
  line: number;
  col: number;
  /**
   * Some argument was not a constant (E_NOT_CONSTANT; it stands as null in `args`), so its other
   * checks are skipped. Only in a module with errors, which is never stored or run.
   */
  unfolded?: true;
}

export interface FieldMeta {
  name: string;
  type: FieldType;
  /** Written `name?:`. */
  optional: boolean;
  /** Neither optional nor defaulted: absence is a validation failure. */
  required: boolean;
  decorators: DecoratorMeta[];
  doc: string | null;
  line: number;
  col: number;
}

export interface GuardUseMeta {
  name: string;
  args: Literal[];
  mode: 'required' | 'optional';
  line: number;
  col: number;
  /** As DecoratorMeta.unfolded: an argument was not a constant, so the guard's own argument check is skipped. */
  unfolded?: true;
}

/** One response a route can produce, inferred from the helper that makes it. */
export interface ResponseMeta {
  status: number;
  /** The helper or statement it came from: `response.ok`, `response {}`, `fail`, `end of handler`. */
  source: string;
  /** The media type (`application/json`, `text/plain`, one a `response {}` sets in its headers), or null for no body. */
  contentType: string | null;
  schema: JsonSchema;
  line: number;
}

export interface RouteMeta {
  method: HttpMethod;
  /** As written: `/users/:id`. */
  path: string;
  /** OpenAPI style: `/users/{id}`. */
  openapiPath: string;
  segments: PathSegment[];
  params: string[];
  /** Module-local index of the route's chunk (guards, validation and handler). */
  chunk: number;
  guards: GuardUseMeta[];
  body: FieldMeta[] | null;
  query: FieldMeta[] | null;
  responses: ResponseMeta[];
  doc: string | null;
  line: number;
  col: number;
}

/** A `fn` or `guard_definition`. */
export interface CallableMeta {
  name: string;
  chunk: number;
  params: string[];
  doc: string | null;
  line: number;
  col: number;
  /** The responses its body can answer with (`fail 403 ...`, response helpers); absent in older artefacts. */
  responses?: ResponseMeta[];
  /** A fn's: the schema of what it returns (with the marks of the calls it returns, see infer.ts); absent in older artefacts. */
  returns?: JsonSchema;
  /** A guard's: the fields of the request's `state` it sets (`state.user = …`), for the reference; absent when none. */
  state?: string[];
}

/** What the reference knows of a file's `middleware { }` block. */
export interface MiddlewareMeta {
  doc: string | null;
  line: number;
  /** The answers its own code gives (a 401 when a header is missing). */
  responses: ResponseMeta[];
  /** The request headers (lower-case) and cookies it reads by a constant name: what a 401 of it asks for. */
  headers: string[];
  cookies: string[];
}

export interface TypeMeta {
  name: string;
  fields: FieldMeta[];
  doc: string | null;
  line: number;
  col: number;
}

export interface CompiledModule {
  header: ArtefactHeader;
  /** Path of the source relative to the app directory, with `/` separators. */
  file: string;
  chunks: ChunkData[];
  routes: RouteMeta[];
  functions: CallableMeta[];
  guards: CallableMeta[];
  types: TypeMeta[];
  /** Module-local chunk index of the `middleware { }` block, if the file has one. */
  middleware: number | null;
  /** Its reference metadata, with the block. */
  middlewareMeta?: MiddlewareMeta;
  /** The file's `const` declarations with their folded values (absent when it has none). */
  consts?: ConstMeta[];
}

/** A top-level `const`: every file reads it (other files through a `const` call reference). */
export interface ConstMeta {
  name: string;
  value: Literal;
  line: number;
  col: number;
}
