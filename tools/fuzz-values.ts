/**
 * The values `rvm fuzz` sends for one validated field. Valid values start from a validator's
 * `accepts` arbitrary (or a plain arbitrary of the field type when no validator has one) and are
 * kept only when every decorator's compiled check passes; invalid ones come from a validator's
 * `rejects` arbitrary, from a value of the wrong type, or from leaving a required field out.
 * Every value is encoded for the transport the field travels in, and one the transport would
 * change on the way (a lone surrogate, a bare line feed in multipart) is not sent.
 */
import fc from 'fast-check';
import type { Arbitrary } from 'fast-check';
import type { PluginRegistry } from '../vm/host/registry.js';
import { uploadedFromBytes, valuesEqual, type FieldType, type FileSample, type Literal, type Value, type ValueObject } from '../plugins/sdk.js';
import { isLiteral } from '../vm/lang.js';
import type { FieldMeta } from '../vm/bytecode/module.js';
import { coerce } from '../vm/runtime/validate.js';
import { anyFileSample } from '../stdlib/validation/file-samples.js';

/** How a section travels: a JSON body, a multipart body (the route takes a file), the query string. */
export type Transport = 'json' | 'multipart' | 'query';

/** A field as sent: JSON data, texts (one per repeated key) or a file. */
export type Wire = { kind: 'json'; value: unknown } | { kind: 'texts'; values: string[] } | { kind: 'file'; file: FileSample };

/** One sendable value: what goes on the wire and what the validators see on arrival. */
export interface Sample {
  wire: Wire;
  value: Value;
}

/** How one invalid request breaks its field. */
export type Mutation = { kind: 'missing' } | { kind: 'wrong_type' } | { kind: 'rejects'; validator: string };

/** One compiled decorator use of a field. */
interface Check {
  name: string;
  test: (value: Value, input: ValueObject) => boolean;
}

/** A field ready to be fuzzed: its pools of valid and invalid samples. */
export interface FieldFuzz {
  name: string;
  type: FieldType;
  transport: Transport;
  /** Absence is a validation failure (no `?`, no `@default`). */
  required: boolean;
  /** Valid samples; empty when none could be generated. */
  valid: Sample[];
  /** Checks that passed no sample on its own: they read other fields (`@same`) and run per request. */
  dependent: Check[];
  /** Every check, for the per-request pass. */
  checks: Check[];
  /** Invalid samples by mutation; `missing` has none. */
  invalid: { mutation: Mutation; samples: Sample[] }[];
  /** Why the field has no valid samples, when it has none. */
  note: string | null;
}

/** Decorators the engine applies itself (presence); their checks always pass. */
const PRESENCE = new Set(['required', 'default']);
/** Candidates drawn per batch for a pool: enough variety for the default 100 runs. */
const MAX_POOL = 400;
/** Files are costly to generate and hold (a `@max_size` reject may be 1 MB): a few suffice. */
const MAX_FILE_POOL = 16;
/** Further batches tried when no candidate of a batch passed every check. */
const EXTRA_BATCHES = 3;
/** Longest generated plain text or list: varied, yet cheap to send. */
const MAX_PLAIN_LENGTH = 24;
/** Plain dates span these years: what every consumer reads without surprise. */
const PLAIN_DATES = { min: new Date('1900-01-01T00:00:00Z'), max: new Date('2100-12-31T23:59:59Z') };

/** Wrong-type values per field type: JSON (strict) and text transports (coerced from text). */
const WRONG_JSON: Record<FieldType, unknown[]> = {
  text: [42, true, { a: 1 }, ['x']],
  int: ['18', 1.5, true, [1]],
  number: ['1', true, [], { n: 1 }],
  bool: ['true', 1, 'yes'],
  list: ['a', { a: 1 }, 1],
  object: [[], 'x', 1],
  date: ['2024-13-45', 20240101, 'tomorrow'],
  datetime: ['2024-05-01', 1714560000, 'now'],
  file: ['not a file', 1],
};
const WRONG_TEXT: Record<FieldType, string[][]> = {
  // Two values under one name arrive as a list, never as text.
  text: [['a', 'b']],
  int: [['abc'], ['1.5'], ['12abc']],
  number: [['abc'], ['1,5']],
  bool: [['maybe'], ['2']],
  list: [],
  object: [['{}'], ['x']],
  date: [['2024-02-30'], ['x']],
  datetime: [['2024-05-01'], ['x']],
  file: [['not a file']],
};

/** A 32-bit seed for one purpose, derived from the run's seed and the purpose's name. */
export function deriveSeed(seed: number, ...parts: string[]): number {
  let h = (seed ^ 0x811c9dc5) >>> 0;
  for (const part of parts) {
    for (let i = 0; i < part.length; i++) h = Math.imul(h ^ part.charCodeAt(i), 0x01000193) >>> 0;
    h = Math.imul(h ^ 0x2f, 0x01000193) >>> 0;
  }
  return h | 0;
}

function isFileSample(v: unknown): v is FileSample {
  return v !== null && typeof v === 'object' && typeof (v as FileSample).name === 'string' && (v as FileSample).bytes instanceof Uint8Array;
}

/** A value as one text field, or null when it is not a scalar. */
function textOf(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : null;
  if (typeof v === 'boolean') return String(v);
  return null;
}

/** JSON carries it unchanged: no undefined, no NaN or Infinity, no files, no cycles (values are trees). */
function jsonSafe(v: unknown): boolean {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (Array.isArray(v)) return v.every(jsonSafe);
  if (typeof v === 'object' && !isFileSample(v) && !(v instanceof Uint8Array)) return Object.values(v).every(jsonSafe);
  return false;
}

/** A surrogate without its partner: UTF-8 cannot carry it. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** The text as UTF-8 carries it: every lone surrogate becomes U+FFFD. */
function toWellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\ufffd');
}

/** A file name multipart carries unchanged: no path separators (busboy strips them), quotes or line breaks. */
function safeFileName(name: string): boolean {
  return toWellFormed(name) === name && !/["\r\n/\\]/.test(name);
}

/** The text as it arrives: ill-formed UTF-16 is replaced, multipart turns every line break into CRLF. */
function carried(text: string, transport: Transport): string {
  const utf8 = toWellFormed(text);
  return transport === 'multipart' ? utf8.replace(/\r\n|\r|\n/g, '\r\n') : utf8;
}

/** What validation receives for a wire value, before coercion (a file stands in as an upload). */
function arrival(wire: Wire, transport: Transport): unknown {
  switch (wire.kind) {
    case 'json':
      return JSON.parse(JSON.stringify(wire.value));
    case 'file':
      return uploadedFromBytes(wire.file.name, wire.file.bytes);
    case 'texts': {
      const texts = wire.values.map((t) => carried(t, transport));
      return texts.length === 1 ? texts[0] : texts;
    }
  }
}

/**
 * Encodes a value for the transport; null when the transport cannot carry it (an object in a
 * query, an empty list that would send nothing, a file in JSON).
 */
export function encode(v: unknown, type: FieldType, transport: Transport): Wire | null {
  if (transport === 'json') return type !== 'file' && jsonSafe(v) ? { kind: 'json', value: v } : null;
  if (isFileSample(v)) return transport === 'multipart' && safeFileName(v.name) ? { kind: 'file', file: v } : null;
  if (Array.isArray(v)) {
    const texts = v.map(textOf);
    if (texts.length === 0 || texts.some((t) => t === null)) return null;
    // One empty value reads as "not sent" for a list.
    if (texts.length === 1 && texts[0] === '') return null;
    return { kind: 'texts', values: texts as string[] };
  }
  const t = textOf(v);
  // An empty text stands for "not sent" for every type but text.
  return t === null || (t === '' && type !== 'text') ? null : { kind: 'texts', values: [t] };
}

/**
 * The sample for a generated value: its encoding and the value validation will see. Null when
 * the transport cannot carry it, or would change it on the way (then it would test the
 * transport, not the validators). A value of the wrong type is kept: refusing it is a finding.
 */
export function sampleOf(v: unknown, type: FieldType, transport: Transport): Sample | null {
  const wire = encode(v, type, transport);
  if (wire === null) return null;
  const raw = arrival(wire, transport);
  const seen = coerce(type, raw, transport !== 'json');
  if (seen === undefined) return { wire, value: raw as Value };
  if (type === 'file') return { wire, value: seen };
  const sent = type === 'list' || type === 'object' ? coerce(type, v, false) : (v as Value);
  return sent !== undefined && valuesEqual(seen, sent) ? { wire, value: seen } : null;
}

/** Any value of the type, for fields whose validators offer no `accepts` arbitrary. */
function plainArbitrary(type: FieldType): Arbitrary<unknown> {
  switch (type) {
    case 'text':
      return fc.string({ maxLength: MAX_PLAIN_LENGTH });
    case 'int':
      return fc.integer({ min: -1000, max: 1000 });
    case 'number':
      return fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ noNaN: true, noDefaultInfinity: true }));
    case 'bool':
      return fc.boolean();
    case 'list':
      return fc.array(fc.string({ maxLength: 8 }), { minLength: 1, maxLength: 5 });
    case 'object':
      return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 4 });
    case 'date':
      return fc.date({ ...PLAIN_DATES, noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
    case 'datetime':
      return fc.date({ ...PLAIN_DATES, noInvalidDate: true }).map((d) => d.toISOString());
    case 'file':
      return anyFileSample(fc);
  }
}

/** Draws `n` values; an arbitrary that throws while generating gives none. */
function draw(arb: Arbitrary<unknown>, seed: number, n: number): unknown[] {
  try {
    return fc.sample(arb, { seed, numRuns: n });
  } catch {
    return [];
  }
}

/** A validator's arbitrary, or null when it has none or building it throws (it covers no value). */
function arbitraryOf(build: () => Arbitrary<unknown> | null | undefined): Arbitrary<unknown> | null {
  try {
    return build() ?? null;
  } catch {
    return null;
  }
}

/** Runs a check; a check that throws counts as failing (the engine would answer 500: the request finds it). */
export function passes(check: Check, value: Value, input: ValueObject): boolean {
  try {
    // Truthiness, as the engine reads a check's answer.
    return Boolean(check.test(value, input));
  } catch {
    return false;
  }
}

/** Builds the valid and invalid pools of one field. `size` is how many samples of each to aim for. */
export function fuzzField(field: FieldMeta, transport: Transport, registry: PluginRegistry, seed: number, size: number): FieldFuzz {
  const type = field.type;
  const uses: { name: string; args: readonly Literal[]; spec: NonNullable<ReturnType<PluginRegistry['validators']['get']>>['spec'] }[] = [];
  for (const d of field.decorators) {
    const found = registry.validators.get(d.name);
    // Only a @default takes a list or object, and it shapes no value: plain values of the type stand in.
    if (found && d.args.every(isLiteral)) uses.push({ name: found.aliasOf ?? found.name, args: d.args, spec: found.spec });
  }
  const checks: Check[] = uses.filter((u) => !PRESENCE.has(u.name)).map((u) => ({ name: u.name, test: u.spec.build(u.args, type) }));
  const poolSize = type === 'file' ? Math.min(size, MAX_FILE_POOL) : Math.min(Math.max(size, 1) * 2, MAX_POOL);

  const accepting = (names: (n: string) => boolean) =>
    uses
      .filter((u) => names(u.name))
      .map((u) => arbitraryOf(() => u.spec.arbitraries?.accepts(fc, u.args, type)))
      .filter((a): a is Arbitrary<unknown> => a !== null);
  const bases = accepting((n) => !PRESENCE.has(n));
  const presence = bases.length > 0 ? bases : accepting((n) => PRESENCE.has(n));
  const base = presence.length > 0 ? fc.oneof(...presence) : plainArbitrary(type);

  let candidates: Sample[] = [];
  for (let batch = 0; batch <= EXTRA_BATCHES && candidates.length === 0; batch++) {
    const drawn = draw(base, deriveSeed(seed, field.name, 'valid', String(batch)), poolSize);
    candidates = drawn.map((v) => sampleOf(v, type, transport)).filter((s): s is Sample => s !== null);
  }
  // A check no candidate passes alone reads other fields (`@same`): it is enforced per request.
  const dependent = checks.filter((c) => candidates.length > 0 && !candidates.some((s) => passes(c, s.value, {})));
  const independent = checks.filter((c) => !dependent.includes(c));
  const valid = candidates.filter((s) => independent.every((c) => passes(c, s.value, {})));
  let note: string | null = null;
  if (candidates.length === 0)
    note = `no value of the field could be sent as ${transport === 'json' ? 'JSON' : transport === 'query' ? 'query text' : 'multipart'}`;
  else if (valid.length === 0) note = `no generated value passed every check (${independent.map((c) => `@${c.name}`).join(' ')})`;

  const invalid: FieldFuzz['invalid'] = [];
  if (field.required) invalid.push({ mutation: { kind: 'missing' }, samples: [] });
  const wrong =
    transport === 'json'
      ? WRONG_JSON[type].map((v) => ({ kind: 'json', value: v }) as Wire)
      : WRONG_TEXT[type].map((values) => ({ kind: 'texts', values }) as Wire);
  if (wrong.length > 0) invalid.push({ mutation: { kind: 'wrong_type' }, samples: wrong.map((w) => ({ wire: w, value: null })) });
  for (const u of uses) {
    const rejects = arbitraryOf(() => u.spec.arbitraries?.rejects?.(fc, u.args, type));
    if (rejects === null) continue;
    const samples = draw(rejects, deriveSeed(seed, field.name, 'rejects', u.name), poolSize)
      .map((v) => sampleOf(v, type, transport))
      .filter((s): s is Sample => s !== null);
    if (samples.length > 0) invalid.push({ mutation: { kind: 'rejects', validator: u.name }, samples });
  }
  return { name: field.name, type, transport, required: field.required, valid, dependent, checks, invalid, note };
}

/** How a mutation is named in reports: `missing`, `wrong type`, `rejected by @email`. */
export function describeMutation(m: Mutation): string {
  return m.kind === 'missing' ? 'missing' : m.kind === 'wrong_type' ? 'wrong type' : `rejected by @${m.validator}`;
}
