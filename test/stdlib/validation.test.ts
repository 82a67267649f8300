import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VALIDATORS, VALIDATOR_NAMES, validation } from '../../stdlib/validation/index.js';
import { core } from '../../stdlib/core/index.js';
import { STANDARD_PLUGINS } from '../../stdlib/index.js';
import { loadPlugins } from '../../vm/host/registry.js';
import { FILE_KINDS, fileBytes } from '../../stdlib/validation/file-samples.js';
import { formatByteSize, parseByteSize } from '../../stdlib/validation/sizes.js';
import { isMultipleOf } from '../../stdlib/validation/numbers.js';
import { MAX_REGEX_INPUT_LENGTH } from '../../stdlib/validation/pattern.js';
import { MAX_PATTERN_LENGTH, uploadedFromBytes, type FieldType, type Literal, type Value, type ValueObject } from '../../plugins/sdk.js';
import { TEST_APP } from '../../plugins/testing.js';

const SEED_NAMED = [
  'required',
  'email',
  'url',
  'phone',
  'uuid',
  'min',
  'max',
  'minLength',
  'range',
  'regex',
  'one_of',
  'default',
  'credit_card',
  'ip',
  'ipv4',
  'ipv6',
  'slug',
  'alphanumeric',
  'image',
  'document',
  'max_size',
  'extension',
];
const OTHERS = [
  'maxLength',
  'length',
  'alpha',
  'numeric',
  'lowercase',
  'uppercase',
  'starts_with',
  'ends_with',
  'contains',
  'not_one_of',
  'hex',
  'base64',
  'json',
  'date',
  'datetime',
  'before',
  'after',
  'hostname',
  'multiple_of',
  'same',
  'mime',
];

/** An upload of the sniffed `mime` kind, named `name`, `size` bytes long (at least its signature). */
function upload(mime: string, name: string, size = 0): Value {
  const kind = FILE_KINDS.find((k) => k.mime === mime);
  assert.ok(kind, `no sample kind ${mime}`);
  return uploadedFromBytes(name, fileBytes(kind, size, 1));
}

function run(name: string, args: Literal[], type: FieldType, value: Value, input: ValueObject = {}): boolean {
  const spec = VALIDATORS[name]!;
  assert.equal(spec.checkArgs?.(args, type) ?? null, null, `@${name}(${args.join(', ')}) should be valid on ${type}`);
  return spec.build(args, type)(value, input);
}

interface Example {
  name: string;
  args?: Literal[];
  type?: FieldType;
  ok: Value[];
  bad: Value[];
}

const PNG = 'image/png';
const PDF = 'application/pdf';

/** Accept/reject examples at the edges, per validator. */
const EXAMPLES: Example[] = [
  { name: 'required', type: 'text', ok: ['', 'x'], bad: [] },
  { name: 'default', args: ['user'], ok: ['', 'admin'], bad: [] },
  { name: 'min', args: [5], type: 'int', ok: [5, 6, 1e9], bad: [4, -5] },
  { name: 'min', args: [0.5], type: 'number', ok: [0.5, 0.51], bad: [0.49, -1] },
  { name: 'min', args: [3], ok: ['abc', '日本語', '👍👍👍', 'abcd'], bad: ['ab', '👍👍', ''] },
  {
    name: 'min',
    args: [2],
    type: 'list',
    ok: [
      [1, 2],
      [1, 2, 3],
    ],
    bad: [[], [1]],
  },
  { name: 'max', args: [10], type: 'int', ok: [10, -10], bad: [11] },
  { name: 'max', args: [3], ok: ['abc', '👍👍👍', ''], bad: ['abcd', '👍👍👍👍'] },
  { name: 'max', args: [1], type: 'list', ok: [[], ['a']], bad: [['a', 'b']] },
  { name: 'range', args: [1, 10], type: 'int', ok: [1, 10, 5], bad: [0, 11] },
  { name: 'range', args: [2, 3], ok: ['ab', 'abc', 'é👍'], bad: ['a', 'abcd'] },
  { name: 'range', args: [1, 2], type: 'list', ok: [[1], [1, 2]], bad: [[], [1, 2, 3]] },
  { name: 'minLength', args: [2], ok: ['ab', '👍👍'], bad: ['a', '👍'] },
  { name: 'minLength', args: [1], type: 'list', ok: [[null]], bad: [[]] },
  { name: 'maxLength', args: [2], ok: ['ab', ''], bad: ['abc'] },
  { name: 'maxLength', args: [0], type: 'list', ok: [[]], bad: [[1]] },
  { name: 'length', args: [6], ok: ['123456', '👍👍👍👍👍👍'], bad: ['12345', '1234567'] },
  { name: 'length', args: [2], type: 'list', ok: [[1, 2]], bad: [[1], [1, 2, 3]] },
  { name: 'multiple_of', args: [5], type: 'int', ok: [0, 5, -10, 1e15], bad: [1, 7, 1e15 + 1] },
  { name: 'multiple_of', args: [0.1], type: 'number', ok: [0.3, 0.7, 1.1, -2.5, 100], bad: [0.35, 0.30000000000000004, 1e-7] },
  { name: 'multiple_of', args: [0.01], type: 'number', ok: [19.99, 0.07], bad: [0.001] },
  { name: 'regex', args: ['^[a-z]+$'], ok: ['abc'], bad: ['Abc', '', 'ab1'] },
  { name: 'regex', args: ['\\d{3}'], ok: ['ab123cd', '123'], bad: ['12', 'abc'] },
  { name: 'regex', args: ['.*'], ok: ['', 'x'.repeat(MAX_REGEX_INPUT_LENGTH)], bad: ['x'.repeat(MAX_REGEX_INPUT_LENGTH + 1)] },
  { name: 'one_of', args: ['user', 'admin'], ok: ['user', 'admin'], bad: ['User', 'root', ''] },
  { name: 'one_of', args: [1, 2], type: 'int', ok: [1, 2], bad: [3, 0] },
  { name: 'one_of', args: [true], type: 'bool', ok: [true], bad: [false] },
  { name: 'not_one_of', args: ['root', 'admin'], ok: ['user', 'Root', ''], bad: ['root', 'admin'] },
  { name: 'not_one_of', args: ['2024-01-01'], type: 'date', ok: ['2024-01-02'], bad: ['2024-01-01'] },
  {
    name: 'email',
    ok: [
      'a@example.com',
      'first.last+tag@sub.example.co',
      "o'brien@example.ie",
      `${'a'.repeat(64)}@example.com`,
      `a@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.${'e'.repeat(60)}`,
    ],
    bad: [
      '',
      'a@b',
      'a@localhost',
      'a..b@example.com',
      '.a@example.com',
      'a.@example.com',
      'a b@example.com',
      'a@-x.com',
      `${'a'.repeat(65)}@example.com`,
      `a@${'b'.repeat(64)}.com`,
      'ü@example.com',
      `a@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.${'e'.repeat(61)}`,
    ],
  },
  {
    name: 'url',
    ok: ['http://example.com', 'https://example.com/a?b=c#d', 'https://localhost:3000', 'HTTPS://EXAMPLE.COM', 'http://192.168.0.1/x', 'https://例え.jp/'],
    bad: [
      '',
      'example.com',
      'ftp://example.com',
      'http://',
      'http:///x',
      'https://exa mple.com',
      'javascript:alert(1)',
      '//example.com',
      'http:example.com',
      ' http://example.com',
      `https://example.com/${'a'.repeat(2100)}`,
    ],
  },
  {
    name: 'phone',
    ok: ['+14155552671', '+1 (555) 123-4567', '555.123.4567', '1234567', '+' + '1'.repeat(15), '(020) 7946 0958'],
    bad: ['', '123456', '1'.repeat(16), '+', '555-CALL', '++15551234567', '555---1234567', '1234567-'],
  },
  {
    name: 'uuid',
    ok: [
      '123e4567-e89b-12d3-a456-426614174000',
      '123E4567-E89B-12D3-A456-426614174000',
      '00000000-0000-0000-0000-000000000000',
      '01890a5d-ac96-774b-bcce-b302099a8057',
    ],
    bad: [
      '',
      '123e4567e89b12d3a456426614174000',
      '{123e4567-e89b-12d3-a456-426614174000}',
      '123e4567-e89b-12d3-a456-42661417400g',
      'urn:uuid:123e4567-e89b-12d3-a456-426614174000',
    ],
  },
  {
    name: 'credit_card',
    ok: ['4111111111111111', '4111 1111 1111 1111', '4111-1111-1111-1111', '378282246310005', '6011111111111117'],
    bad: ['', '4111111111111112', '4111  1111 1111 1111', '41111111111', '4111-1111-1111-111a'],
  },
  { name: 'ip', ok: ['127.0.0.1', '::1', '2001:db8::8a2e:370:7334', '::ffff:192.0.2.1'], bad: ['', '256.0.0.1', '01.0.0.1', 'fe80::1%eth0', 'localhost'] },
  { name: 'ipv4', ok: ['0.0.0.0', '255.255.255.255'], bad: ['::1', '1.2.3', '1.2.3.04', '1.2.3.4 '] },
  { name: 'ipv6', ok: ['::', '::1', '1:2:3:4:5:6:7:8'], bad: ['127.0.0.1', '1::2::3', 'fe80::1%eth0', '1:2:3:4:5:6:7:8:9'] },
  {
    name: 'hostname',
    ok: ['localhost', 'example.com', 'example.com.', 'xn--fsq.jp', '1.example', 'a-b.c'],
    bad: ['', '-a.com', 'a-.com', 'a..com', 'a_b.com', `${'a'.repeat(64)}.com`, 'ä.com', '.'],
  },
  { name: 'slug', ok: ['a', 'hello-world', 'post-2024'], bad: ['', 'Hello', 'a--b', '-a', 'a-', 'a_b', 'crème'] },
  { name: 'alpha', ok: ['abc', 'Zoë', 'Zoe\u0308', 'Жюль', '漢字'], bad: ['', 'abc1', 'a b', 'a-b', '\u0308a'] },
  { name: 'alphanumeric', ok: ['abc123', 'Ünïcode9', '٣'], bad: ['', 'a b', 'a_b', 'a!'] },
  { name: 'numeric', ok: ['0', '007', '1234567890'], bad: ['', '-1', '1.5', '1e3', ' 1', '١٢'] },
  { name: 'lowercase', ok: ['abc', 'abc123', '', '123', 'ß'], bad: ['Abc', 'abC', 'É'] },
  { name: 'uppercase', ok: ['ABC', 'ABC123', '', '123'], bad: ['aBC', 'ABc', 'ß'] },
  { name: 'starts_with', args: ['ab'], ok: ['ab', 'abc'], bad: ['a', 'Ab', 'xab'] },
  { name: 'ends_with', args: ['.com'], ok: ['x.com', '.com'], bad: ['x.co', 'x.COM'] },
  { name: 'contains', args: ['@'], ok: ['a@b', '@'], bad: ['ab', ''] },
  { name: 'contains', args: ['admin'], type: 'list', ok: [['user', 'admin']], bad: [[], ['Admin'], [['admin']]] },
  { name: 'contains', args: [2], type: 'list', ok: [[1, 2]], bad: [['2'], [1]] },
  { name: 'hex', ok: ['0', 'deadBEEF', '0123456789abcdef'], bad: ['', '0x1f', 'g', 'ab cd'] },
  { name: 'base64', ok: ['QQ==', 'QUI=', 'QUJD', 'SGVsbG8gd29ybGQ=', '+/+/'], bad: ['', 'QQ', 'QQ=', 'Q===', '-_-_', 'QU JD', 'QUJD\n'] },
  { name: 'json', ok: ['{}', '[1,2]', '"x"', '3', 'null', ' {"a": 1} '], bad: ['', '{', "{'a':1}", 'NaN', '[1,]', 'undefined'] },
  {
    name: 'date',
    ok: ['2024-02-29', '2000-02-29', '0001-01-01', '9999-12-31'],
    bad: ['', '2023-02-29', '1900-02-29', '2024-13-01', '2024-04-31', '2024-1-1', '2024-01-01T00:00:00Z', '2024/01/01'],
  },
  {
    name: 'datetime',
    ok: ['2024-05-01T12:30:00Z', '2024-05-01t12:30:00z', '2024-05-01 12:30+02:00', '2024-05-01T12:30:00.123456789-05:00', '2024-05-01T12:30:00+0530'],
    bad: [
      '',
      '2024-05-01',
      '2024-05-01T12:30:00',
      '2024-05-01T24:00:00Z',
      '2024-05-01T12:60:00Z',
      '2016-12-31T23:59:60Z',
      '2024-02-30T00:00:00Z',
      '2024-05-01T12:30:00+24:00',
    ],
  },
  { name: 'before', args: ['2024-01-01'], type: 'date', ok: ['2023-12-31', '1999-01-01'], bad: ['2024-01-01', '2024-01-02'] },
  {
    name: 'before',
    args: ['2024-01-01T00:00:00Z'],
    type: 'datetime',
    ok: ['2023-12-31T23:59:59.999Z', '2024-01-01T00:30:00+01:00'],
    bad: ['2024-01-01T00:00:00Z', '2024-01-01T01:00:00+01:00', '2024-01-01T00:00:00.001Z'],
  },
  { name: 'before', args: ['now'], type: 'date', ok: ['2000-01-01'], bad: ['9999-01-01'] },
  { name: 'before', args: ['2024-01-01'], type: 'text', ok: ['2023-12-31', '2023-12-31T23:59:59Z'], bad: ['2024-01-01', 'yesterday', ''] },
  { name: 'after', args: ['2024-01-01'], type: 'date', ok: ['2024-01-02'], bad: ['2024-01-01', '2023-12-31'] },
  { name: 'after', args: ['now'], type: 'datetime', ok: ['9999-01-01T00:00:00Z'], bad: ['2000-01-01T00:00:00Z'] },
  { name: 'same', args: ['password'], ok: [], bad: [] },
  {
    name: 'image',
    type: 'file',
    ok: [upload(PNG, 'a.png'), upload('image/jpeg', 'x.jpg'), upload('image/gif', 'x'), upload('image/webp', 'x.webp'), upload(PNG, 'renamed.pdf')],
    bad: [upload(PDF, 'a.png'), upload('text/plain', 'a.png'), upload('application/octet-stream', 'a.png'), uploadedFromBytes('empty.png', new Uint8Array(0))],
  },
  {
    name: 'document',
    type: 'file',
    ok: [
      upload(PDF, 'a.pdf'),
      upload('application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'a.docx'),
      upload('application/vnd.oasis.opendocument.text', 'a.odt'),
      upload('text/plain', 'a.txt'),
    ],
    bad: [upload(PNG, 'a.pdf'), upload('application/zip', 'a.docx'), upload('application/octet-stream', 'a.pdf')],
  },
  { name: 'mime', args: ['image/png', 'application/pdf'], type: 'file', ok: [upload(PNG, 'a'), upload(PDF, 'a')], bad: [upload('image/jpeg', 'a.png')] },
  { name: 'mime', args: ['image/*'], type: 'file', ok: [upload('image/heic', 'a'), upload('image/x-icon', 'a')], bad: [upload(PDF, 'a.png')] },
  { name: 'max_size', args: ['1KB'], type: 'file', ok: [upload(PNG, 'a.png', 1024), upload(PNG, 'a.png', 100)], bad: [upload(PNG, 'a.png', 1025)] },
  {
    name: 'max_size',
    args: ['100'],
    type: 'file',
    ok: [upload('text/plain', 'a.txt', 100), uploadedFromBytes('e', new Uint8Array(0))],
    bad: [upload('text/plain', 'a.txt', 101)],
  },
  {
    name: 'extension',
    args: ['png', '.JPG'],
    type: 'file',
    ok: [upload(PDF, 'a.png'), upload(PDF, 'A.PNG'), upload(PDF, 'photo.jpg'), upload(PDF, 'dir/x.Jpg')],
    bad: [upload(PNG, 'a.pngx'), upload(PNG, 'png'), upload(PNG, '.png'), upload(PNG, 'a.png.exe'), upload(PNG, 'a.png/x')],
  },
  { name: 'extension', args: ['tar.gz'], type: 'file', ok: [upload(PDF, 'a.tar.gz')], bad: [upload(PDF, 'a.gz'), upload(PDF, '.tar.gz')] },
];

/** Valid arguments for validators that need some. */
const SAMPLE_ARGS: Record<string, Literal[]> = {
  default: [null],
  same: ['other'],
  min: [1],
  max: [1],
  range: [1, 2],
  minLength: [1],
  maxLength: [1],
  length: [1],
  multiple_of: [2],
  one_of: ['a'],
  not_one_of: ['a'],
  regex: ['^a'],
  starts_with: ['a'],
  ends_with: ['a'],
  contains: ['a'],
  before: ['now'],
  after: ['now'],
  mime: ['image/png'],
  max_size: ['1MB'],
  extension: ['png'],
};

describe('validation plugin: registration', () => {
  test('registers exactly the 43 built-in validators and 3 aliases', async () => {
    assert.deepEqual([...VALIDATOR_NAMES].sort(), [...SEED_NAMED, ...OTHERS].sort());
    assert.equal(VALIDATOR_NAMES.length, 43);
    const registry = await loadPlugins([core, validation], TEST_APP);
    const own = [...registry.validators.values()].filter((v) => v.plugin === 'validation');
    assert.equal(own.filter((v) => v.aliasOf === undefined).length, 43);
    const aliases = Object.fromEntries(own.filter((v) => v.aliasOf !== undefined).map((v) => [v.name, v.aliasOf]));
    assert.deepEqual(aliases, { min_length: 'minLength', max_length: 'maxLength', oneOf: 'one_of' });
  });

  test('is a standard plugin loaded after core', () => {
    assert.deepEqual(STANDARD_PLUGINS.map((p) => p.name).slice(0, 2), ['core', 'validation']);
    assert.deepEqual(validation.dependencies, ['core']);
  });

  test('every validator has a doc, a message for each type, and schema keywords', () => {
    for (const name of VALIDATOR_NAMES) {
      const spec = VALIDATORS[name]!;
      assert.ok(spec.doc.endsWith('.'), `${name}: doc is one sentence`);
      assert.ok(spec.schema, `${name}: schema`);
      assert.ok(spec.arbitraries, `${name}: arbitraries`);
    }
  });
});

describe('validation plugin: accepts and rejects at the edges', () => {
  for (const ex of EXAMPLES) {
    const args = ex.args ?? [];
    const type = ex.type ?? 'text';
    test(`@${ex.name}(${args.map((a) => JSON.stringify(a)).join(', ')}) on ${type}`, () => {
      for (const v of ex.ok) assert.equal(run(ex.name, args, type, v), true, `accepts ${JSON.stringify(v)}`);
      for (const v of ex.bad) assert.equal(run(ex.name, args, type, v), false, `rejects ${JSON.stringify(v)}`);
    });
  }

  test('@same compares with the other field of the body, by value', () => {
    assert.equal(run('same', ['password'], 'text', 's3cret', { password: 's3cret' }), true);
    assert.equal(run('same', ['password'], 'text', 's3cret', { password: 'S3cret' }), false);
    assert.equal(run('same', ['password'], 'text', 's3cret', {}), false);
    assert.equal(run('same', ['tags'], 'list', ['a', 'b'], { tags: ['a', 'b'] }), true);
    assert.equal(run('same', ['n'], 'int', 1, { n: '1' }), false);
    // A prototype member is not a field.
    assert.equal(run('same', ['constructor'], 'text', 'x', {}), false);
  });

  test('every example set covers all 43 validators', () => {
    const covered = new Set(EXAMPLES.map((e) => e.name));
    assert.deepEqual(
      VALIDATOR_NAMES.filter((n) => !covered.has(n)),
      [],
    );
  });
});

describe('validation plugin: messages', () => {
  const cases: [string, Literal[], FieldType, string][] = [
    ['required', [], 'text', 'is required'],
    ['min', [8], 'text', 'must be at least 8 characters'],
    ['min', [1], 'text', 'must be at least 1 character'],
    ['min', [18], 'int', 'must be at least 18'],
    ['min', [2], 'list', 'must have at least 2 items'],
    ['max', [128], 'text', 'must be at most 128 characters'],
    ['max', [5], 'list', 'must have at most 5 items'],
    ['range', [1, 10], 'number', 'must be between 1 and 10'],
    ['range', [3, 20], 'text', 'must be between 3 and 20 characters'],
    ['length', [6], 'text', 'must be exactly 6 characters'],
    ['length', [1], 'list', 'must have exactly 1 item'],
    ['one_of', ['user', 'admin'], 'text', "must be one of 'user', 'admin'"],
    ['one_of', [1, 2], 'int', 'must be one of 1, 2'],
    ['not_one_of', ['root'], 'text', "must not be one of 'root'"],
    ['email', [], 'text', 'must be a valid email address'],
    ['max_size', ['5MB'], 'file', 'must be at most 5 MB'],
    ['max_size', ['1.5 MB'], 'file', 'must be at most 1.5 MB'],
    ['max_size', ['500kb'], 'file', 'must be at most 500 KB'],
    ['max_size', ['1500'], 'file', 'must be at most 1500 bytes'],
    ['multiple_of', [0.5], 'number', 'must be a multiple of 0.5'],
    ['before', ['now'], 'date', 'must be in the past'],
    ['after', ['2024-01-01'], 'date', 'must be after 2024-01-01'],
    ['same', ['password'], 'text', "must match the field 'password'"],
    ['mime', ['image/png', 'image/gif', 'application/pdf'], 'file', 'must be a file of type image/png, image/gif or application/pdf'],
    ['extension', ['png', '.jpg'], 'file', 'must be a .png or .jpg file'],
    ['starts_with', ['ab'], 'text', "must start with 'ab'"],
    ['contains', [3], 'list', 'must contain 3'],
  ];
  for (const [name, args, type, message] of cases) {
    test(`@${name}(${args.join(', ')}) on ${type}: "${message}"`, () => {
      assert.equal(VALIDATORS[name]!.message(args, type), message);
    });
  }

  test('every validator has a message starting with "must" or "is"', () => {
    for (const name of VALIDATOR_NAMES) {
      const spec = VALIDATORS[name]!;
      for (const type of spec.types) {
        const args = SAMPLE_ARGS[name] ?? [];
        assert.match(spec.message(args, type), /^(must|is) /, `${name} on ${type}`);
      }
    }
  });
});

describe('validation plugin: schema keywords', () => {
  const cases: [string, Literal[], FieldType, Record<string, unknown>][] = [
    ['required', [], 'text', {}],
    ['default', ['user'], 'text', { default: 'user' }],
    ['email', [], 'text', { format: 'email' }],
    ['url', [], 'text', { format: 'uri' }],
    ['uuid', [], 'text', { format: 'uuid' }],
    ['ipv4', [], 'text', { format: 'ipv4' }],
    ['hostname', [], 'text', { format: 'hostname' }],
    ['date', [], 'text', { format: 'date' }],
    ['datetime', [], 'text', { format: 'date-time' }],
    ['min', [8], 'text', { minLength: 8 }],
    ['min', [18], 'int', { minimum: 18 }],
    ['min', [1], 'list', { minItems: 1 }],
    ['max', [120], 'number', { maximum: 120 }],
    ['range', [1, 5], 'list', { minItems: 1, maxItems: 5 }],
    ['length', [6], 'text', { minLength: 6, maxLength: 6 }],
    ['maxLength', [3], 'list', { maxItems: 3 }],
    ['multiple_of', [5], 'int', { multipleOf: 5 }],
    ['one_of', ['user', 'admin'], 'text', { enum: ['user', 'admin'] }],
    ['not_one_of', [0], 'int', { not: { enum: [0] } }],
    ['regex', ['^[a-z]+$'], 'text', { pattern: '^[a-z]+$' }],
    ['starts_with', ['a.b'], 'text', { pattern: '^a\\.b' }],
    ['ends_with', ['-x'], 'text', { pattern: '-x$' }],
    ['contains', ['x'], 'list', { contains: { const: 'x' } }],
    ['base64', [], 'text', { contentEncoding: 'base64', pattern: '^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$' }],
    ['json', [], 'text', { contentMediaType: 'application/json' }],
    ['before', ['2024-01-01'], 'date', { formatExclusiveMaximum: '2024-01-01' }],
    ['image', [], 'file', { contentMediaType: 'image/*' }],
    ['mime', ['application/pdf'], 'file', { contentMediaType: 'application/pdf' }],
    ['max_size', ['5MB'], 'file', { 'x-max-size': 5 * 1024 * 1024 }],
    ['extension', ['.PNG'], 'file', { 'x-extensions': ['png'] }],
  ];
  for (const [name, args, type, schema] of cases) {
    test(`@${name}(${args.join(', ')}) on ${type}`, () => {
      assert.deepEqual(VALIDATORS[name]!.schema!(args, type), schema);
    });
  }

  test('every pattern keyword compiles as a Unicode-mode regex, as ajv compiles it', () => {
    for (const name of VALIDATOR_NAMES) {
      const spec = VALIDATORS[name]!;
      for (const type of spec.types) {
        const pattern = spec.schema!(SAMPLE_ARGS[name] ?? [], type).pattern;
        if (typeof pattern === 'string') assert.doesNotThrow(() => new RegExp(pattern, 'u'), name);
      }
    }
    assert.doesNotThrow(() => new RegExp(VALIDATORS.starts_with!.schema!(['a-b/c[d]'], 'text').pattern as string, 'u'));
  });
});

describe('validation plugin: argument checks and bounds', () => {
  const refused: [string, Literal[], FieldType][] = [
    ['regex', ['[a-'], 'text'],
    ['regex', ['(?<n>a)\\k<m>'], 'text'],
    ['regex', ['a'.repeat(MAX_PATTERN_LENGTH + 1)], 'text'],
    ['max_size', ['5 parsecs'], 'file'],
    ['max_size', ['0'], 'file'],
    ['max_size', ['-5MB'], 'file'],
    ['max_size', [''], 'file'],
    ['max_size', ['0.5B'], 'file'],
    ['max_size', ['2TB'], 'file'],
    ['range', [10, 5], 'int'],
    ['range', [0.2, 0.8], 'int'],
    ['min', [1.5], 'text'],
    ['min', [-1], 'list'],
    ['min', [1e300], 'int'],
    ['length', [-1], 'text'],
    ['multiple_of', [0], 'number'],
    ['multiple_of', [-2], 'int'],
    ['same', ['not a field'], 'text'],
    ['same', [''], 'text'],
    ['one_of', [], 'text'],
    ['one_of', ['a', 1], 'text'],
    ['one_of', [1.5], 'int'],
    ['one_of', ['2024-02-30'], 'date'],
    ['not_one_of', [true, false], 'bool'],
    ['default', [5], 'text'],
    ['default', ['x'], 'int'],
    ['default', [1.5], 'int'],
    ['default', ['2024-13-01'], 'date'],
    ['default', ['2024-01-01'], 'datetime'],
    ['default', ['x'], 'list'],
    ['before', ['yesterday'], 'date'],
    ['before', ['2024-01-01T00:00:00'], 'datetime'],
    ['before', ['0000-01-01'], 'date'],
    ['after', ['9999-12-31T23:59:59.999Z'], 'datetime'],
    ['starts_with', [''], 'text'],
    ['contains', [''], 'text'],
    ['contains', [1], 'text'],
    ['mime', [], 'file'],
    ['mime', ['png'], 'file'],
    ['mime', ['video/mp4'], 'file'],
    ['mime', ['video/*'], 'file'],
    ['extension', [], 'file'],
    ['extension', ['*.png'], 'file'],
    ['extension', ['a/b'], 'file'],
  ];
  for (const [name, args, type] of refused) {
    test(`@${name}(${args.map((a) => JSON.stringify(a)).join(', ')}) on ${type} is refused`, () => {
      const problem = VALIDATORS[name]!.checkArgs!(args, type);
      assert.notEqual(problem, null);
      assert.ok((typeof problem === 'string' ? problem : problem!.message).length > 0);
    });
  }

  const accepted: [string, Literal[], FieldType][] = [
    ['regex', ['^\\p{L}+$'], 'text'],
    ['max_size', ['5MB'], 'file'],
    ['max_size', [' 1.5 mb '], 'file'],
    ['max_size', ['2GiB'], 'file'],
    ['max_size', ['1'], 'file'],
    ['range', [5, 5], 'int'],
    ['min', [-3.5], 'int'],
    ['one_of', ['2024-02-29'], 'date'],
    ['default', [null], 'list'],
    ['default', ['2024-01-01T00:00:00+01:00'], 'datetime'],
    ['contains', [null], 'list'],
    ['before', ['now'], 'text'],
    ['mime', ['IMAGE/PNG', 'application/*'], 'file'],
    ['extension', ['.tar.gz', 'PNG'], 'file'],
  ];
  for (const [name, args, type] of accepted) {
    test(`@${name}(${args.map((a) => JSON.stringify(a)).join(', ')}) on ${type} is accepted`, () => {
      assert.equal(VALIDATORS[name]!.checkArgs?.(args, type) ?? null, null);
    });
  }

  test('bounds per dimension', () => {
    assert.deepEqual(VALIDATORS.min!.bounds!([8], 'text'), { length: { min: 8 } });
    assert.deepEqual(VALIDATORS.max!.bounds!([5], 'int'), { value: { max: 5 } });
    assert.deepEqual(VALIDATORS.range!.bounds!([1, 3], 'list'), { items: { min: 1, max: 3 } });
    assert.deepEqual(VALIDATORS.minLength!.bounds!([2], 'text'), { length: { min: 2 } });
    assert.deepEqual(VALIDATORS.maxLength!.bounds!([2], 'list'), { items: { max: 2 } });
    assert.deepEqual(VALIDATORS.length!.bounds!([4], 'text'), { length: { min: 4, max: 4 } });
    assert.deepEqual(VALIDATORS.max_size!.bounds!(['1KB'], 'file'), { size: { max: 1024 } });
    assert.equal(VALIDATORS.max_size!.uploadLimit!(['5MB']), 5 * 1024 * 1024);
  });
});

describe('validation plugin: helpers', () => {
  test('parseByteSize reads decimal figures with binary units', () => {
    assert.equal(parseByteSize('100'), 100);
    assert.equal(parseByteSize('5MB'), 5 * 1024 ** 2);
    assert.equal(parseByteSize('5 mb'), 5 * 1024 ** 2);
    assert.equal(parseByteSize('500KB'), 500 * 1024);
    assert.equal(parseByteSize('1.5 MB'), 1.5 * 1024 ** 2);
    assert.equal(parseByteSize('2GiB'), 2 * 1024 ** 3);
    assert.equal(parseByteSize('1.5B'), 1);
    for (const bad of ['', 'MB', '5 XB', '1e3', '-1', '0', '0.4', '5 M B', '1,5MB', '2048GB']) assert.equal(parseByteSize(bad), null, bad);
  });

  test('formatByteSize never rounds', () => {
    assert.equal(formatByteSize(5 * 1024 ** 2), '5 MB');
    assert.equal(formatByteSize(1024), '1 KB');
    assert.equal(formatByteSize(1536), '1.5 KB');
    assert.equal(formatByteSize(1000), '1000 bytes');
    assert.equal(formatByteSize(1), '1 byte');
    assert.equal(formatByteSize(3 * 1024 ** 3), '3 GB');
  });

  test('isMultipleOf decides in decimal', () => {
    assert.equal(isMultipleOf(0.3, 0.1), true);
    assert.equal(isMultipleOf(1e21, 3), false);
    assert.equal(isMultipleOf(3e21, 3), true);
    assert.equal(isMultipleOf(-0, 7), true);
    assert.equal(isMultipleOf(1.23e-10, 1e-12), true);
    assert.equal(isMultipleOf(Number.POSITIVE_INFINITY, 1), false);
  });
});
