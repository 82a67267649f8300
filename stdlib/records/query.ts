/**
 * Filters, options and cursors of record queries: every check of a query is here, in two steps
 * (spec/plugins/records.md, "Checked queries").
 *
 * - The walk, against a record type: what the language may ask. One walker serves two callers:
 *   the linker's check of what the compiler knew of a call (a problem is a compile error,
 *   `E_RECORD_QUERY`) and the run-time reading of a filter or options object (a problem is
 *   InvalidQueryError, 400 `invalid_query`, its hint left out in production where it lists fields).
 * - The check, against a table: what a store runs. A Query becomes a CheckedQuery (columns
 *   resolved, operators fitting them, values canonical, bounds kept, cursor values checked), or
 *   an InvalidQueryError. SQL (sql.ts) only renders a checked query, the memory store only
 *   evaluates one.
 */
import { HostObject, RawRequestArg, UNKNOWN, didYouMean, type CallContext, type KnownArg, type Value } from '../../plugins/sdk.js';
import {
  DEFAULT_LIMIT,
  InvalidQueryError,
  MAX_LIMIT,
  MAX_QUERY_ROWS,
  put,
  type Filter,
  type FilterOp,
  type OrderKey,
  type Query,
  type StoredValue,
} from './store.js';
import type { TypeShape } from './record.js';
import { decodeCursor, effectiveOrder } from './cursor.js';
import { canonicalValue, clip, fieldOf, isPlainObject, suggestion, type Field, type StoredType, type Table } from './columns.js';
import { columnTypeOf } from './table.js';

/** A query problem with the nearest name, when there is one. */
export class QueryProblem extends Error {
  constructor(
    message: string,
    readonly hint?: string,
    /** The hint names the type's fields: a production answer leaves it out. */
    readonly namesFields = false,
  ) {
    super(message);
  }
}

/**
 * What a run-time walk knows of its request (the CallContext): where a value came from, so that
 * an operator object the client wrote is refused, whatever it holds.
 */
export type RequestWalk = Pick<CallContext, 'requestOrigin' | 'app'>;

/**
 * The operators a `@hidden` field takes: a lookup by a secret's hash (equality) or whether it is
 * set. Ranges, prefixes, `contains`, `ne` and lists would answer questions about the secret.
 */
export const HIDDEN_FIELD_OPS: readonly FilterOp[] = ['eq', 'is_null'];

/** Every operator of a filter (spec/plugins/records.md). */
export const FILTER_OPS: readonly FilterOp[] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in', 'contains', 'starts_with', 'is_null'];

/** The option names of `where` and `page`. */
export const OPTION_NAMES: readonly string[] = ['order', 'limit', 'offset', 'after'];

/** The operators of a column whose values are ranged: all but text's `contains` and `starts_with`. */
const RANGED_OPS: readonly FilterOp[] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in', 'is_null'];

/** The operators a column of each type takes in a store's query: what every store answers alike (`false` sorts before `true`). */
const OPS_OF: Record<StoredType, readonly FilterOp[]> = {
  text: FILTER_OPS,
  uuid: RANGED_OPS,
  int: RANGED_OPS,
  number: RANGED_OPS,
  date: RANGED_OPS,
  datetime: RANGED_OPS,
  bool: RANGED_OPS,
  list: ['contains', 'is_null'],
  object: ['is_null'],
};

/** A bool field's operators in a route's filter (spec/plugins/records.md): no range over two values, which only asks `eq` obscurely. */
const BOOL_FIELD_OPS: readonly FilterOp[] = ['eq', 'ne', 'in', 'not_in', 'is_null'];

/** The operators a field takes in a route's filter: its column's, a bool's ranges aside. */
function fieldOps(kind: StoredType): readonly FilterOp[] {
  return kind === 'bool' ? BOOL_FIELD_OPS : OPS_OF[kind];
}

/** Whether rows can be ordered by a column of this type: list and object values have no order. */
function sorts(type: StoredType): boolean {
  return type !== 'list' && type !== 'object';
}

const kindsOfShape = new WeakMap<TypeShape, ReadonlyMap<string, StoredType>>();

/** The stored type of every field a filter or order may name: the declared ones and the store's own (cached per type). */
function fieldKinds(shape: TypeShape): ReadonlyMap<string, StoredType> {
  let kinds = kindsOfShape.get(shape);
  if (kinds === undefined) {
    const made = new Map<string, StoredType>([['id', 'uuid']]);
    for (const f of shape.type.fields) made.set(f.name, columnTypeOf(f.type));
    made.set('created_at', 'datetime');
    made.set('updated_at', 'datetime');
    kindsOfShape.set(shape, (kinds = made));
  }
  return kinds;
}

/** The names a hint may suggest: every field but the `@hidden` ones. */
function visibleNames(kinds: ReadonlyMap<string, StoredType>, shape: TypeShape): string[] {
  return [...kinds.keys()].filter((name) => !shape.hidden.has(name));
}

/** What a walked value is: a run-time value, or what the compiler knew (UNKNOWN is accepted unchecked). */
type Walked = KnownArg | Value;
type WalkedObject = { [key: string]: Walked };

/** Unknown to the walk: a value the compiler did not know, or knew only as request data. */
function isUnknown(v: Walked): boolean {
  return v === UNKNOWN || v instanceof RawRequestArg;
}

function isObject(v: Walked): v is WalkedObject & Walked {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof HostObject) && !(v instanceof RawRequestArg);
}

function describe(v: Walked): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (v instanceof HostObject) return v.typeName;
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'number') return Number.isInteger(v) ? 'an int' : 'a number';
  return typeof v === 'string' ? 'text' : 'a bool';
}

/** Walks one value against the type of its field; null passes (the caller decides where null may stand). */
function walkValue(field: string, kind: StoredType, v: Walked): void {
  if (v === null || isUnknown(v)) return;
  const ok =
    kind === 'int'
      ? typeof v === 'number' && Number.isInteger(v)
      : kind === 'number'
        ? typeof v === 'number' && Number.isFinite(v)
        : kind === 'bool'
          ? typeof v === 'boolean'
          : kind === 'list' || kind === 'object'
            ? typeof v !== 'object'
            : typeof v === 'string';
  if (!ok) {
    const wanted =
      kind === 'list' || kind === 'object'
        ? 'a text, number or bool'
        : kind === 'int'
          ? 'an int'
          : kind === 'uuid'
            ? 'text (an id)'
            : kind === 'date' || kind === 'datetime'
              ? `text (a ${kind})`
              : kind === 'text'
                ? 'text'
                : `a ${kind}`;
    throw new QueryProblem(`'${field}' is compared with ${describe(v)}, but takes ${wanted}`);
  }
}

/** One operator use on a field: the value it takes. */
function walkOp(field: string, kind: StoredType, hidden: boolean, op: string, v: Walked): void {
  if (!(FILTER_OPS as readonly string[]).includes(op)) {
    throw new QueryProblem(`unknown operator '${op}' on '${field}'`, didYouMean(op, FILTER_OPS) ?? `operators are ${FILTER_OPS.join(', ')}`);
  }
  if (hidden && !HIDDEN_FIELD_OPS.includes(op as FilterOp)) {
    throw new QueryProblem(
      `operator '${op}' does not apply to '${field}', a @hidden field`,
      `it takes ${HIDDEN_FIELD_OPS.join(', ')} (a lookup by the value, never a question about it)`,
    );
  }
  if (!fieldOps(kind).includes(op as FilterOp)) {
    throw new QueryProblem(
      `operator '${op}' does not apply to '${field}' (${kind === 'uuid' ? 'the id' : `a ${kind} field`})`,
      `it takes ${fieldOps(kind).join(', ')}`,
    );
  }
  if (isUnknown(v)) return;
  switch (op) {
    case 'is_null':
      if (typeof v !== 'boolean') throw new QueryProblem(`'is_null' on '${field}' takes true or false, got ${describe(v)}`);
      return;
    case 'in':
    case 'not_in':
      if (!Array.isArray(v)) throw new QueryProblem(`'${op}' on '${field}' takes a list, got ${describe(v)}`);
      for (const item of v) {
        if (item === null) throw new QueryProblem(`'${op}' on '${field}' takes a list without null (use 'is_null')`);
        walkValue(field, kind, item);
      }
      return;
    case 'eq':
    case 'ne':
      return walkValue(field, kind, v);
    default:
      if (v === null) throw new QueryProblem(`'${op}' on '${field}' cannot take null`);
      if ((op === 'contains' || op === 'starts_with') && kind === 'text' && typeof v !== 'string') {
        throw new QueryProblem(`'${op}' on '${field}' takes text, got ${describe(v)}`);
      }
      return walkValue(field, kind, v);
  }
}

/** A field name of the type, else a problem suggesting the nearest visible one. */
function knownField(kinds: ReadonlyMap<string, StoredType>, shape: TypeShape, name: string, what: string): StoredType {
  const kind = kinds.get(name);
  if (kind === undefined) throw notAField(kinds, shape, name, what);
  return kind;
}

function notAField(kinds: ReadonlyMap<string, StoredType>, shape: TypeShape, name: string, what: string): QueryProblem {
  const visible = visibleNames(kinds, shape);
  return new QueryProblem(`${what} '${name}' is not a field of ${shape.type.name}`, didYouMean(name, visible) ?? `fields are ${visible.join(', ')}`, true);
}

/**
 * Walks a filter: every field declared, every operator known and fitting, every value of its
 * field's type. On a request (`walk`), an operator object the client wrote is refused: only the
 * route's code chooses how a field is compared.
 */
export function walkFilter(shape: TypeShape, filter: Walked, walk: RequestWalk | null = null): Filter {
  if (filter === null || isUnknown(filter)) return {};
  if (!isObject(filter)) throw new QueryProblem(`a filter is an object of field → value, got ${describe(filter)}`);
  const kinds = fieldKinds(shape);
  const out: Filter = {};
  for (const [name, condition] of Object.entries(filter)) {
    const kind = knownField(kinds, shape, name, 'filter field');
    if (isObject(condition)) {
      if (walk !== null && walk.requestOrigin(condition as Value) !== null) {
        throw new QueryProblem(
          `the condition on '${name}' is an object from the request: a filter takes operators only from the route's code`,
          'validate the field as a value (text, int…) and pass that',
        );
      }
      const hidden = shape.hidden.has(name);
      for (const [op, v] of Object.entries(condition)) walkOp(name, kind, hidden, op, v);
    } else if (kind === 'list' || kind === 'object') {
      if (condition !== null && !isUnknown(condition))
        throw new QueryProblem(`'${name}' is a ${kind} field: compare it with an operator ({ ${fieldOps(kind).join(': …, ')}: … })`);
    } else {
      walkValue(name, kind, condition);
    }
    put(out, name, condition);
  }
  return out;
}

/** Walks the order option: a field name, `-field` for descending, or a list of them; never a `@hidden` field (rows in its order reveal it). */
function walkOrder(shape: TypeShape, order: Walked): OrderKey[] {
  if (order === null || isUnknown(order)) return [];
  const items: Walked[] = Array.isArray(order) ? (order as Walked[]) : [order];
  const kinds = fieldKinds(shape);
  const keys: OrderKey[] = [];
  for (const item of items) {
    if (isUnknown(item)) continue;
    if (typeof item !== 'string') throw new QueryProblem(`an order key is text ('name' or '-created_at'), got ${describe(item)}`);
    const desc = item.startsWith('-');
    const field = desc ? item.slice(1) : item;
    const kind = knownField(kinds, shape, field, 'order key');
    if (shape.hidden.has(field)) throw new QueryProblem(`cannot order by '${field}', a @hidden field: the order of the rows would reveal it`);
    if (!sorts(kind)) throw new QueryProblem(`cannot order by '${field}', a ${kind} field`);
    keys.push({ field, desc });
  }
  return keys;
}

/** An int option within bounds. */
function intOption(name: string, v: Walked, min: number, max: number): number | null {
  if (v === null || isUnknown(v)) return null;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new QueryProblem(`option '${name}' takes an int, got ${describe(v)}`);
  if (v < min || v > max) throw new QueryProblem(`option '${name}' must be from ${min} to ${max}, got ${v}`);
  return v;
}

/** Walks the options of `where` or `page`; `after` is returned as written (a cursor is decoded by the caller). */
export function walkOptions(shape: TypeShape, options: Walked): { order: OrderKey[]; limit: number; offset: number; after: string | null } {
  const out = { order: [] as OrderKey[], limit: DEFAULT_LIMIT, offset: 0, after: null as string | null };
  if (options === null || isUnknown(options)) return out;
  if (!isObject(options)) throw new QueryProblem(`options are an object ({ order, limit, offset, after }), got ${describe(options)}`);
  for (const [name, v] of Object.entries(options)) {
    switch (name) {
      case 'order':
        out.order = walkOrder(shape, v);
        break;
      case 'limit':
        out.limit = intOption('limit', v, 1, MAX_LIMIT) ?? DEFAULT_LIMIT;
        break;
      case 'offset':
        out.offset = intOption('offset', v, 0, Number.MAX_SAFE_INTEGER) ?? 0;
        break;
      case 'after':
        if (v !== null && !isUnknown(v) && typeof v !== 'string')
          throw new QueryProblem(`option 'after' takes a cursor (text from page().next), got ${describe(v)}`);
        out.after = typeof v === 'string' ? v : null;
        break;
      default:
        throw new QueryProblem(`unknown option '${name}'`, didYouMean(name, OPTION_NAMES) ?? `options are ${OPTION_NAMES.join(', ')}`);
    }
  }
  return out;
}

/** What to pass a record write instead of request data. */
export const UNVALIDATED_HINT = 'validate the body and pass `body` (or name the fields: { name: body.name })';

/** Walks the fields given to `T.new`, `T.create` or `T.update`: declared ones only, known values of their type, never the request's data as it came. */
export function walkFields(shape: TypeShape, fields: Walked, what: string): void {
  if (fields instanceof RawRequestArg)
    throw new QueryProblem(`${what} takes ${fields.source}, the request's data as the client sent it: a client could set any field`, UNVALIDATED_HINT);
  if (fields === null || isUnknown(fields) || !isObject(fields)) return;
  const kinds = fieldKinds(shape);
  for (const [name, v] of Object.entries(fields)) {
    if (name === 'id' || name === 'created_at' || name === 'updated_at') throw new QueryProblem(`'${name}' is set by the store; ${what} cannot set it`);
    const kind = knownField(kinds, shape, name, 'field');
    if (!isUnknown(v) && v !== null && (kind === 'list' ? !Array.isArray(v) : kind === 'object' ? !isObject(v) : false)) {
      throw new QueryProblem(`'${name}' is a ${kind} field, given ${describe(v)}`);
    }
    if (kind !== 'list' && kind !== 'object') walkValue(name, kind, v);
  }
}

/** An id argument the compiler knew: text (the store's UUIDs), or a problem. */
export function walkId(id: Walked | undefined, what: string): void {
  if (id === undefined || isUnknown(id) || typeof id === 'string') return;
  throw new QueryProblem(`${what}() takes an id (text), got ${describe(id)}`);
}

/** The message of a run-time problem: its text and hint, as one 400 `invalid_query`; in production, no hint that lists the type's fields. */
export function invalidQuery(problem: QueryProblem, dev: boolean): InvalidQueryError {
  const hint = problem.namesFields && !dev ? undefined : problem.hint;
  return new InvalidQueryError(hint ? `${problem.message} (${hint})` : problem.message);
}

/** The Query a store runs for a where/page call, from the checked filter and options; a cursor must be signed with the app secret. */
export function buildQuery(shape: TypeShape, filter: Value, options: Value, walk: RequestWalk): Query {
  try {
    const f = walkFilter(shape, filter, walk);
    const o = walkOptions(shape, options);
    const query: Query = { filter: f, order: o.order, limit: o.limit, offset: o.offset };
    if (o.after !== null) query.after = decodeCursor(o.after, o.order, walk.app.secrets.appSecret());
    return query;
  } catch (e) {
    if (e instanceof QueryProblem) throw invalidQuery(e, walk.app.dev);
    // A cursor's fault is the caller's to fix: say what to pass instead.
    if (e instanceof InvalidQueryError && e.message.startsWith('invalid cursor'))
      throw new InvalidQueryError(`${e.message} in option 'after' (pass page().next as it is, with the same order)`);
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// The check: a Query against a table, as every store receives it

/** The most values of one `in`/`not_in` list: beyond that a query is a bulk export, not a filter. */
export const MAX_IN_VALUES = 1000;
/** The largest offset: deep offsets scan and discard rows; `page` with a cursor is the way through a big table. */
export const MAX_OFFSET = 1_000_000;

/**
 * One condition of a checked filter, its operator one its column takes. The value is canonical
 * (canonicalValue): for `eq`/`ne` a value or null, for `in`/`not_in` a list of values, for
 * `is_null` a bool, for the others a value (for `contains` on a list, a text, number or bool).
 */
export interface Condition {
  field: Field;
  op: FilterOp;
  value: StoredValue;
}

/** One key of a checked order: a column that sorts. */
export interface OrderColumn {
  field: Field;
  desc: boolean;
}

/** A query as stores run it: every name a column of the table, every value canonical, every bound kept. */
export interface CheckedQuery {
  /** All must hold. */
  conditions: Condition[];
  /** The effective order (cursor.ts): the keys given, then `id`. */
  order: OrderColumn[];
  /** The key values of the row to start after, one per order key (null where that row held null); null for none. */
  after: StoredValue[] | null;
  limit: number;
  offset: number;
}

/** A value an operator compares with: never null, canonical for the field. */
function operand(field: Field, op: FilterOp, value: StoredValue): StoredValue {
  if (value === null) throw new InvalidQueryError(`operator '${op}' of field '${field.name}' needs a value, not null`);
  return canonicalValue(field.type, value, field.name);
}

/** The needle of `contains` on a list: a text, number or bool, canonical as such. */
function listNeedle(field: Field, value: StoredValue): StoredValue {
  const type = typeof value === 'string' ? 'text' : typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'bool' : null;
  if (type === null) throw new InvalidQueryError(`operator 'contains' of list field '${field.name}' needs a text, number or bool`);
  return canonicalValue(type, value, field.name);
}

function checkCondition(field: Field, op: string, value: StoredValue): Condition {
  if (!(FILTER_OPS as readonly string[]).includes(op)) {
    throw new InvalidQueryError(`unknown operator '${clip(op)}' on field '${field.name}'${suggestion(op, FILTER_OPS)}`);
  }
  const ops = OPS_OF[field.type];
  if (!ops.includes(op as FilterOp)) {
    throw new InvalidQueryError(`operator '${op}' does not apply to ${field.type} field '${field.name}' (it takes ${ops.join(', ')})`);
  }
  const checked = (v: StoredValue): Condition => ({ field, op: op as FilterOp, value: v });
  switch (op as FilterOp) {
    case 'eq':
    case 'ne':
      return checked(value === null ? null : canonicalValue(field.type, value, field.name));
    case 'in':
    case 'not_in':
      if (!Array.isArray(value)) throw new InvalidQueryError(`operator '${op}' of field '${field.name}' needs a list`);
      if (value.length > MAX_IN_VALUES) throw new InvalidQueryError(`operator '${op}' of field '${field.name}' takes at most ${MAX_IN_VALUES} values`);
      return checked(value.map((v) => operand(field, op as FilterOp, v)));
    case 'is_null':
      if (typeof value !== 'boolean') throw new InvalidQueryError(`operator 'is_null' of field '${field.name}' needs true or false`);
      return checked(value);
    case 'contains':
      return checked(field.type === 'list' ? listNeedle(field, value) : operand(field, 'contains', value));
    default:
      return checked(operand(field, op as FilterOp, value));
  }
}

/** The conditions of a filter (field → value, or field → { operator: value }), checked against `table`. */
export function checkFilter(table: Table, filter: Filter): Condition[] {
  if (!isPlainObject(filter)) throw new InvalidQueryError('a filter is an object of field → value or operators');
  const out: Condition[] = [];
  for (const [name, condition] of Object.entries(filter)) {
    const field = fieldOf(table, name);
    if (!isPlainObject(condition)) out.push(checkCondition(field, 'eq', condition));
    else for (const [op, value] of Object.entries(condition)) out.push(checkCondition(field, op, value as StoredValue));
  }
  return out;
}

/** The effective order, each key a column of `table` that sorts (list and object fields do not). */
function checkOrder(table: Table, order: readonly OrderKey[]): OrderColumn[] {
  if (!Array.isArray(order)) throw new InvalidQueryError('order is a list of keys');
  for (const key of order) {
    if (typeof key !== 'object' || key === null || typeof key.field !== 'string') throw new InvalidQueryError('an order key names a field');
  }
  return effectiveOrder(order).map((key) => {
    const field = fieldOf(table, key.field);
    if (!sorts(field.type)) throw new InvalidQueryError(`${field.type} field '${field.name}' cannot order a query`);
    return { field, desc: key.desc };
  });
}

/** A cursor's key values, one per order key, canonical; only `id`, which every row has, may not be null. */
function checkAfter(order: readonly OrderColumn[], after: StoredValue[]): StoredValue[] {
  if (!Array.isArray(after) || after.length !== order.length) throw new InvalidQueryError('invalid cursor: it does not fit this order');
  return order.map(({ field }, i) => (after[i] === null && field.name !== 'id' ? null : canonicalValue(field.type, after[i]!, field.name)));
}

/** `query` checked against `table`: the one form the stores run. */
export function checkQuery(table: Table, query: Query): CheckedQuery {
  const conditions = checkFilter(table, query.filter ?? {});
  const order = checkOrder(table, query.order ?? []);
  const after = query.after === undefined ? null : checkAfter(order, query.after);
  const limit = query.limit;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_QUERY_ROWS) throw new InvalidQueryError(`limit must be an integer from 1 to ${MAX_QUERY_ROWS}`);
  const offset = query.offset ?? 0;
  if (!Number.isSafeInteger(offset) || offset < 0 || offset > MAX_OFFSET) throw new InvalidQueryError(`offset must be an integer from 0 to ${MAX_OFFSET}`);
  return { conditions, order, after, limit, offset };
}
