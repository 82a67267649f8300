/**
 * The record value: what `T.new`, `T.create`, `T.find`… return. It carries its type, so field
 * writes are checked against the declared fields and `save r` knows its table; its JSON and text
 * forms (responses, `log()`, interpolation) leave out `@hidden` fields.
 */
import { HostObject, RvmError, didYouMean, type RecordType, type Value } from '../../plugins/sdk.js';
import { own, put, type Row, type StoredValue } from './store.js';

/** The fields the store sets on every record; the language may read them, never write them. */
export const SYSTEM_FIELDS: readonly string[] = ['id', 'created_at', 'updated_at'];

/** What one record type shows and accepts, computed once per type. */
export interface TypeShape {
  readonly type: RecordType;
  /** Declared field names, in order. */
  readonly declared: ReadonlySet<string>;
  /** `@hidden` fields: never in a response, a log line or the text form. */
  readonly hidden: ReadonlySet<string>;
  /** Declared fields that are shown, in order. */
  readonly shown: readonly string[];
  /** What a stored record shows, in order: `id`, the shown fields, `created_at`, `updated_at`. */
  readonly shownStored: readonly string[];
}

const shapes = new WeakMap<RecordType, TypeShape>();

/** The shape of `type` (cached per type). */
export function shapeOf(type: RecordType): TypeShape {
  let shape = shapes.get(type);
  if (shape === undefined) {
    const hidden = new Set(type.fields.filter((f) => f.decorators.some((d) => d.name === 'hidden')).map((f) => f.name));
    const shown = type.fields.filter((f) => !hidden.has(f.name)).map((f) => f.name);
    shape = { type, declared: new Set(type.fields.map((f) => f.name)), hidden, shown, shownStored: ['id', ...shown, 'created_at', 'updated_at'] };
    shapes.set(type, shape);
  }
  return shape;
}

/** A record of a `type`: stored when it has an id, new (made by `T.new`) otherwise. */
export class RecordValue extends HostObject {
  readonly typeName: string;
  readonly shape: TypeShape;
  /** The fields as the language sees them, `id`/`created_at`/`updated_at` included once stored. */
  #row: Row;

  constructor(shape: TypeShape, row: Row) {
    super();
    this.shape = shape;
    this.typeName = shape.type.name;
    this.#row = row;
  }

  /** The record's id, or null while it is new. */
  get id(): string | null {
    const id = this.#row.id;
    return typeof id === 'string' ? id : null;
  }

  /** The declared fields (hidden ones included), as `save` validates and stores them. */
  fields(): Row {
    const out: Row = {};
    for (const name of this.shape.declared) if (Object.hasOwn(this.#row, name)) put(out, name, this.#row[name]!);
    return out;
  }

  /** Takes the stored row after `save` (id and time stamps set by the store). */
  replace(row: Row): void {
    this.#row = row;
  }

  get(key: string): Value | undefined {
    if (Object.hasOwn(this.#row, key)) return this.#row[key] as Value;
    if (this.shape.declared.has(key) || SYSTEM_FIELDS.includes(key)) return null;
    throw unknownField(this.shape, key);
  }

  override set(key: string, value: Value): void {
    if (SYSTEM_FIELDS.includes(key)) throw new RvmError(`'${key}' of a ${this.typeName} is set by the store and cannot be assigned`, 'read_only');
    if (!this.shape.declared.has(key)) throw unknownField(this.shape, key);
    put(this.#row, key, value as StoredValue);
  }

  override keys(): string[] {
    const names = this.id === null ? this.shape.shown : this.shape.shownStored;
    return names.filter((n) => Object.hasOwn(this.#row, n) || this.shape.declared.has(n));
  }

  toJSON(): unknown {
    // A stored record of a type without hidden fields holds exactly what it shows, in that order
    // (stores give rows in row order): its row is its JSON form, read as it is, not copied.
    if (this.shape.hidden.size === 0 && this.id !== null) return this.#row;
    const out: Record<string, unknown> = {};
    for (const name of this.keys()) put(out, name, own(this.#row, name));
    return out;
  }
}

/** `unknown_field`, naming the nearest visible field (never a `@hidden` one: the key may be the client's). */
export function unknownField(shape: TypeShape, key: string): RvmError {
  const hint = didYouMean(key, shape.shownStored);
  return new RvmError(`type ${shape.type.name} has no field '${key}'${hint ? ` (${hint})` : ''}`, 'unknown_field');
}

/** A value as stored: language values are JSON data already; host values keep their JSON form. */
export function storedValue(value: Value): StoredValue {
  // A copy: a record's JSON form may be its own row, which must not be shared with another.
  if (value instanceof HostObject) return structuredClone(value.toJSON()) as StoredValue;
  return value as StoredValue;
}
