import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fc from 'fast-check';
import { VALIDATORS, VALIDATOR_NAMES } from '../../stdlib/validation/index.js';
import { fromJson, uploadedFromBytes, type FieldType, type FileSample, type Literal, type Value, type ValueObject } from '../../plugins/sdk.js';
import { coerce } from '../../vm/runtime/validate.js';

/** Runs per property: enough to hit edges of every generator, quick for ~150 cases (RVM_PROPERTY_RUNS raises it). */
const RUNS = Number(process.env.RVM_PROPERTY_RUNS) || 60;

interface Case {
  type: FieldType;
  args: Literal[];
}

const ALL: FieldType[] = ['text', 'int', 'number', 'bool', 'file', 'list', 'object', 'date', 'datetime'];
const text = (args: Literal[] = []): Case => ({ type: 'text', args });
const on = (type: FieldType, ...args: Literal[]): Case => ({ type, args });
/** The fields and bounds `@before` and `@after` are both tried on: dates, date-times, text, `now`, an offset. */
const DATE_BOUNDS: Case[] = [
  on('date', '2024-01-01'),
  on('datetime', '2024-01-01T12:00:00Z'),
  on('text', '2000-06-15'),
  on('date', 'now'),
  on('datetime', 'now'),
  on('text', 'now'),
  on('date', '2024-01-01T12:00:00+02:00'),
];

/** Representative argument lists per validator and applicable type. */
const CASES: Record<string, Case[]> = {
  required: ALL.map((t) => on(t)),
  default: [
    on('text', 'x'),
    on('int', 5),
    on('number', 1.5),
    on('bool', true),
    on('date', '2024-01-01'),
    on('datetime', '2024-01-01T00:00:00Z'),
    on('list', null),
    on('object', null),
    on('text', null),
  ],
  same: ['text', 'int', 'number', 'bool', 'list', 'object', 'date', 'datetime'].map((t) => on(t as FieldType, 'password')),
  min: [on('int', 5), on('int', -3.5), on('number', 0), on('number', -1e6), on('text', 0), on('text', 8), on('list', 2)],
  max: [on('int', 10), on('number', 2.5), on('text', 3), on('list', 0), on('list', 4)],
  range: [on('int', 1, 10), on('int', 5, 5), on('number', -1.5, 1.5), on('text', 3, 20), on('list', 1, 3)],
  minLength: [on('text', 2), on('text', 0), on('list', 1)],
  maxLength: [on('text', 5), on('text', 0), on('list', 2)],
  length: [on('text', 6), on('text', 0), on('list', 3)],
  multiple_of: [on('int', 5), on('int', 0.5), on('int', 2.5), on('int', 1), on('number', 0.1), on('number', 3), on('number', 0.25), on('number', 1e-7)],
  one_of: [
    on('text', 'user', 'admin'),
    on('int', 1, 2, 3),
    on('number', 0.5, 1),
    on('bool', true),
    on('bool', true, false),
    on('date', '2024-01-01', '2024-01-02'),
  ],
  not_one_of: [on('text', 'root', 'admin'), on('int', 0), on('number', 1.5), on('bool', false), on('date', '2024-01-01')],
  regex: [
    text(['^[a-z]+$']),
    text(['\\d{3}']),
    text(['^[A-Z]{2}-\\d{4}$']),
    text(['colou?r']),
    text(['.*']),
    text(['^\\p{Lu}']),
    text(['(?i)^colou?r$']),
    text(['^\\pL+$']),
    text(['^[[:alpha:]]+\\z']),
  ],
  starts_with: [text(['ab']), text(['x'])],
  ends_with: [text(['.com']), text(['x'])],
  contains: [text(['@']), text(['ab']), on('list', 'a'), on('list', 1), on('list', null), on('list', true)],
  alpha: [text()],
  alphanumeric: [text()],
  numeric: [text()],
  lowercase: [text()],
  uppercase: [text()],
  hex: [text()],
  base64: [text()],
  json: [text()],
  slug: [text()],
  email: [text()],
  url: [text()],
  phone: [text()],
  uuid: [text()],
  credit_card: [text()],
  ip: [text()],
  ipv4: [text()],
  ipv6: [text()],
  hostname: [text()],
  date: [text()],
  datetime: [text()],
  before: DATE_BOUNDS,
  after: DATE_BOUNDS,
  image: [on('file')],
  document: [on('file')],
  mime: [on('file', 'image/png'), on('file', 'image/*'), on('file', 'application/pdf', 'text/plain'), on('file', 'application/octet-stream')],
  max_size: [on('file', '5MB'), on('file', '100'), on('file', '1KB'), on('file', '1.5 MB'), on('file', '2GiB'), on('file', '1')],
  extension: [on('file', 'png'), on('file', '.PDF', 'docx'), on('file', 'tar.gz')],
};

/** What validation hands a check: files become UploadedFile, JSON values rvm values. */
function asValue(v: unknown, type: FieldType): Value {
  if (type === 'file') {
    const sample = v as FileSample;
    return uploadedFromBytes(sample.name, sample.bytes);
  }
  return fromJson(v);
}

/** The value is of the field's type: what the engine's JSON-strict typing accepts as it is. */
function ofType(v: Value, type: FieldType): boolean {
  return coerce(type, v, false) !== undefined;
}

function show(c: Case): string {
  return `(${c.args.map((a) => JSON.stringify(a)).join(', ')}) on ${c.type}`;
}

describe('validation arbitraries agree with the checks', () => {
  test('every validator has arbitraries and property cases for each of its types', () => {
    assert.equal(VALIDATOR_NAMES.length, 43);
    for (const name of VALIDATOR_NAMES) {
      const spec = VALIDATORS[name]!;
      assert.ok(spec.arbitraries, `${name} has no arbitraries`);
      const cases = CASES[name];
      assert.ok(cases && cases.length > 0, `${name} has no property cases`);
      for (const type of spec.types)
        assert.ok(
          cases.some((c) => c.type === type),
          `${name} has no case for ${type}`,
        );
    }
  });

  for (const name of Object.keys(CASES)) {
    for (const c of CASES[name]!) {
      test(`@${name}${show(c)}`, () => {
        const spec = VALIDATORS[name]!;
        assert.ok(spec.types.includes(c.type), `${name} does not apply to ${c.type}`);
        assert.equal(spec.checkArgs?.(c.args, c.type) ?? null, null, 'the case arguments are valid');
        const check = spec.build(c.args, c.type);
        // @same compares with another field: give it the same value for accepts, a different one for rejects.
        const input = (v: Value, equal: boolean): ValueObject => (name === 'same' ? { password: equal ? v : '\u0000other' } : {});
        fc.assert(
          fc.property(spec.arbitraries!.accepts(fc, c.args, c.type), (raw) => {
            const v = asValue(raw, c.type);
            // Messages are built on failure only: a file sample's JSON runs to megabytes.
            if (!ofType(v, c.type)) assert.fail(`accepted value ${JSON.stringify(raw)} is not of type ${c.type}`);
            if (check(v, input(v, true)) !== true) assert.fail(`should accept ${JSON.stringify(v)}`);
          }),
          { numRuns: RUNS },
        );
        const rejects = spec.arbitraries!.rejects?.(fc, c.args, c.type) ?? null;
        if (rejects === null) return;
        fc.assert(
          fc.property(rejects, (raw) => {
            const v = asValue(raw, c.type);
            if (!ofType(v, c.type)) assert.fail(`rejected value ${JSON.stringify(raw)} is not of type ${c.type}`);
            if (check(v, input(v, false)) !== false) assert.fail(`should reject ${JSON.stringify(v)}`);
          }),
          { numRuns: RUNS },
        );
      });
    }
  }

  test('@same rejects a value that differs from the other field, and a missing other field', () => {
    const check = VALIDATORS.same!.build(['password'], 'text');
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        fc.pre(a !== b);
        assert.equal(check(a, { password: b }), false);
        assert.equal(check(a, {}), false);
      }),
    );
  });

  test('checks never throw on values of another type', () => {
    for (const name of Object.keys(CASES)) {
      for (const c of CASES[name]!) {
        const check = VALIDATORS[name]!.build(c.args, c.type);
        fc.assert(
          fc.property(fc.jsonValue(), (raw) => {
            const result = check(fromJson(raw), {});
            assert.equal(typeof result, 'boolean');
          }),
          { numRuns: 20 },
        );
      }
    }
  });
});
