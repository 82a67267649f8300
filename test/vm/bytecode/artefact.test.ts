import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { decodeEnvelope, decodeModule, encodeEnvelope, encodeModule, sniffArtefact } from '../../../vm/bytecode/artefact.js';
import { ArtefactError } from '../../../vm/bytecode/codec.js';
import { validateModule } from '../../../vm/bytecode/verify.js';
import { ARTEFACT_MAGIC, BUNDLE_MAGIC, FORMAT_VERSION, type CompiledModule } from '../../../vm/bytecode/module.js';
import { INSTRUCTION_SIZE, Op } from '../../../vm/bytecode/opcodes.js';
import { compileSource } from '../../../vm/compiler/compiler.js';
import { handModule } from '../artefact-fixture.js';

/** Runs `fn` and returns the ArtefactError it throws; fails on anything else. */
function artefactError(fn: () => unknown): ArtefactError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ArtefactError) return e;
    assert.fail(`expected ArtefactError, got ${String(e)}`);
  }
  assert.fail('expected ArtefactError, nothing was thrown');
}

/** Decodes or throws an ArtefactError; anything else fails the test. */
function decodeOrRefuse(bytes: Uint8Array): CompiledModule | ArtefactError {
  try {
    return decodeModule(bytes);
  } catch (e) {
    if (e instanceof ArtefactError) return e;
    throw e;
  }
}

describe('artefact round trip', () => {
  test('decode(encode(m)) deep-equals m, typed arrays included', () => {
    const m = handModule();
    const back = decodeModule(encodeModule(m));
    assert.deepStrictEqual(back, m);
    for (const chunk of back.chunks) {
      assert.ok(chunk.code instanceof Int32Array);
      assert.ok(chunk.lines instanceof Int32Array);
    }
  });

  test('decodes from a misaligned view of the bytes', () => {
    const bytes = encodeModule(handModule());
    const shifted = new Uint8Array(bytes.length + 1);
    shifted.set(bytes, 1);
    assert.deepStrictEqual(decodeModule(shifted.subarray(1)), handModule());
  });

  test('the decoded module does not share memory with the bytes', () => {
    const bytes = encodeModule(handModule());
    const m = decodeModule(bytes);
    bytes.fill(0);
    assert.deepStrictEqual(m, handModule());
  });

  test('validateModule accepts the fixture and returns an equal copy', () => {
    const m = handModule();
    const copy = validateModule(m);
    assert.deepStrictEqual(copy, m);
    assert.notEqual(copy.chunks[0]!.code, m.chunks[0]!.code);
  });

  test('sniffArtefact tells modules from other bytes', () => {
    assert.equal(sniffArtefact(encodeModule(handModule())), 'module');
    assert.equal(sniffArtefact(encodeEnvelope(BUNDLE_MAGIC, {}, {})), 'bundle');
    assert.equal(sniffArtefact(new Uint8Array([1, 2, 3])), null);
  });
});

describe('artefact header checks', () => {
  test('foreign bytes are E_ARTEFACT_FOREIGN', () => {
    assert.equal(artefactError(() => decodeModule(new TextEncoder().encode('{"hello": "json"}'))).code, 'E_ARTEFACT_FOREIGN');
    assert.equal(artefactError(() => decodeModule(encodeEnvelope(BUNDLE_MAGIC, {}, {}))).code, 'E_ARTEFACT_FOREIGN');
  });

  test('another format version is E_ARTEFACT_VERSION', () => {
    const bytes = encodeModule(handModule());
    const sigLength = 1 + ARTEFACT_MAGIC.length;
    assert.equal(bytes[sigLength], FORMAT_VERSION);
    const next = Uint8Array.from(bytes);
    next[sigLength] = FORMAT_VERSION + 1;
    assert.equal(artefactError(() => decodeModule(next)).code, 'E_ARTEFACT_VERSION');
  });

  test('empty, truncated and damaged bytes are E_ARTEFACT_CORRUPT', () => {
    const bytes = encodeModule(handModule());
    assert.equal(artefactError(() => decodeModule(new Uint8Array(0))).code, 'E_ARTEFACT_CORRUPT');
    for (let n = 1; n < bytes.length; n++) {
      assert.equal(artefactError(() => decodeModule(bytes.subarray(0, n))).code, 'E_ARTEFACT_CORRUPT', `truncated at ${n}`);
    }
    const flipped = Uint8Array.from(bytes);
    flipped[flipped.length - 3]! ^= 0x10;
    assert.equal(artefactError(() => decodeModule(flipped)).code, 'E_ARTEFACT_CORRUPT');
    const longer = new Uint8Array(bytes.length + 1);
    longer.set(bytes);
    assert.equal(artefactError(() => decodeModule(longer)).code, 'E_ARTEFACT_CORRUPT');
  });

  test('a non-byte argument is refused with E_ARTEFACT_CORRUPT', () => {
    assert.equal(artefactError(() => decodeModule('nope' as unknown as Uint8Array)).code, 'E_ARTEFACT_CORRUPT');
  });

  test('the message names the file when one is given', () => {
    const e = artefactError(() => decodeModule(new Uint8Array([0xc1]), 'cache/x.rvmc'));
    assert.equal(e.file, 'cache/x.rvmc');
    assert.match(e.message, /^cache\/x\.rvmc: /);
    assert.doesNotMatch(e.message, /\n/);
  });
});

describe('artefact validation', () => {
  /** Encodes a damaged copy of the fixture (the encoder trusts its input) and expects refusal. */
  function refused(damage: (m: CompiledModule) => void): void {
    const m = handModule();
    damage(m);
    assert.equal(artefactError(() => decodeModule(encodeModule(m))).code, 'E_ARTEFACT_CORRUPT');
    assert.equal(artefactError(() => validateModule(m)).code, 'E_ARTEFACT_CORRUPT');
  }

  /** Re-encodes the fixture's artefact with its first route's stored `responses` replaced. */
  function withStoredResponses(stored: unknown): Uint8Array {
    const { header, body } = decodeEnvelope(encodeModule(handModule()), ARTEFACT_MAGIC, 'module artefact');
    (body as { routes: { responses: unknown }[] }).routes[0]!.responses = stored;
    return encodeEnvelope(ARTEFACT_MAGIC, header, body);
  }

  test('responses are stored packed, and decode to the written list', () => {
    const { body } = decodeEnvelope(encodeModule(handModule()), ARTEFACT_MAGIC, 'module artefact');
    assert.ok((body as { routes: { responses: unknown }[] }).routes[0]!.responses instanceof Uint8Array);
    const packed = new Packr({ useRecords: false }).pack(handModule().routes[0]!.responses);
    assert.deepStrictEqual(decodeModule(withStoredResponses(packed)).routes[0]!.responses, handModule().routes[0]!.responses);
  });

  test('responses stored unpacked, undecodable or with trailing bytes are refused', () => {
    const packed = new Packr({ useRecords: false }).pack(handModule().routes[0]!.responses);
    for (const stored of [handModule().routes[0]!.responses, new Uint8Array([0xc1]), Uint8Array.from([...packed, 0]), packed.subarray(0, packed.length - 1)]) {
      assert.equal(artefactError(() => decodeModule(withStoredResponses(stored))).code, 'E_ARTEFACT_CORRUPT');
    }
  });

  test('a packed response list with a bad entry is refused', () => {
    const packed = new Packr({ useRecords: false }).pack([{ status: 99, source: 'x', contentType: null, schema: {}, line: 1 }]);
    assert.equal(artefactError(() => decodeModule(withStoredResponses(packed))).code, 'E_ARTEFACT_CORRUPT');
  });

  test('a lambda chunk round-trips; MAKE_LAMBDA naming a chunk of another kind, or none, is refused', () => {
    const source = 'route GET / {\n  n = 2\n  log(sort_by([1], x => x * n))\n}\n';
    const m = compileSource('l.rvm', source, { compilerVersion: 'test', pluginsFingerprint: 'test' }).module!;
    assert.deepEqual(
      decodeModule(encodeModule(m)).chunks.map((c) => c.kind),
      ['lambda', 'route'],
    );
    const code = m.chunks[1]!.code;
    let at = 0;
    while (code[at] !== Op.MAKE_LAMBDA) at += INSTRUCTION_SIZE[code[at]!]!;
    assert.deepEqual([code[at + 1], code[at + 2]], [1, 0], 'one capture, chunk 0');
    for (const chunk of [1, 2, -1]) {
      const damaged = structuredClone(m);
      damaged.chunks[1]!.code[at + 2] = chunk;
      assert.equal(artefactError(() => decodeModule(encodeModule(damaged))).code, 'E_ARTEFACT_CORRUPT', `chunk ${chunk}`);
    }
  });
  test('unknown opcode', () => refused((m) => (m.chunks[0]!.code[15] = 9999)));
  test('const index outside the constants', () => refused((m) => (m.chunks[0]!.code[3] = 1)));
  test('negative const index', () => refused((m) => (m.chunks[0]!.code[3] = -1)));
  test('slot outside the locals', () => refused((m) => (m.chunks[0]!.code[5] = 1)));
  test('ambient name out of range', () => refused((m) => (m.chunks[0]!.code[1] = 99)));
  test('call ref outside the refs', () => refused((m) => (m.chunks[0]!.code[13] = 1)));
  test('a record call ref and argument shapes round-trip', () => {
    const m = handModule();
    const ref = m.chunks[0]!.refs[0]!;
    ref.args = [
      {
        k: 'o',
        e: [
          ['email', { k: 'u' }],
          ['age', { k: 'c', v: { gte: 18 } }],
        ],
      },
      { k: 'l', i: [{ k: 'c', v: '-age' }] },
    ];
    m.chunks[2]!.refs.push({ name: 'save', kind: 'record', argc: 1, line: 9, col: 3 });
    const back = decodeModule(encodeModule(m));
    assert.deepEqual(back.chunks[0]!.refs[0]!.args, ref.args);
    assert.deepEqual(back.chunks[2]!.refs.at(-1), { name: 'save', kind: 'record', argc: 1, line: 9, col: 3 });
  });
  test('constants and const call refs round-trip', () => {
    const m = handModule();
    m.consts = [
      { name: 'PAGE_SIZE', value: 20, line: 1, col: 7 },
      { name: 'NOTHING', value: null, line: 2, col: 7 },
    ];
    m.chunks[2]!.refs.push({ name: 'TAX', kind: 'const', argc: 0, line: 4, col: 9 });
    const back = decodeModule(encodeModule(m));
    assert.deepEqual(back.consts, m.consts);
    assert.deepEqual(back.chunks[2]!.refs.at(-1), { name: 'TAX', kind: 'const', argc: 0, line: 4, col: 9 });
    assert.equal(decodeModule(encodeModule(handModule())).consts, undefined);
  });
  test('a constant whose value is not a literal', () => refused((m) => (m.consts = [{ name: 'A', value: [1] as unknown as null, line: 1, col: 1 }])));
  test('a constant without a name', () => refused((m) => (m.consts = [{ value: 1, line: 1, col: 1 } as never])));
  test('an argument shape of an unknown kind', () => refused((m) => ((m.chunks[0]!.refs[0] as { args: unknown }).args = [{ k: 'x' }])));
  test('an object shape entry that is not a pair', () => refused((m) => ((m.chunks[0]!.refs[0] as { args: unknown }).args = [{ k: 'o', e: [['a']] }])));
  test('a call ref of an unknown kind', () => refused((m) => ((m.chunks[0]!.refs[0] as { kind: string }).kind = 'magic')));
  test('call argc differing from its ref', () => refused((m) => (m.chunks[0]!.code[14] = 2)));
  test('count larger than the chunk stack', () => refused((m) => (m.chunks[0]!.code[11] = 2)));
  test('jump outside the code', () => refused((m) => (m.chunks[2]!.code[5] = 8)));
  test('jump into an operand', () => refused((m) => (m.chunks[2]!.code[5] = 1)));
  test('instruction cut short', () => refused((m) => (m.chunks[0]!.code = m.chunks[0]!.code.subarray(0, 14))));
  test('code running off its end', () => refused((m) => (m.chunks[1]!.code = Int32Array.from([Op.LOAD_LOCAL, 0, Op.POP]))));
  test('empty code', () => refused((m) => (m.chunks[1]!.code = new Int32Array(0))));
  test('linked instructions', () => refused((m) => (m.chunks[0]!.code[12] = Op.CALL_NATIVE)));
  test('line table not in triples', () => refused((m) => (m.chunks[0]!.lines = Int32Array.from([0, 3]))));
  test('line offset outside the code', () => refused((m) => (m.chunks[0]!.lines[6] = 99)));
  test('slots below arity', () => refused((m) => (m.chunks[1]!.slots = 0)));
  test('absurd maxStack', () => refused((m) => (m.chunks[0]!.maxStack = 2 ** 30)));
  test('non-literal constant', () => refused((m) => ((m.chunks[0]!.consts as unknown[])[0] = { x: 1 })));
  test('route chunk out of range', () => refused((m) => (m.routes[0]!.chunk = 3)));
  test('route pointing at a fn chunk', () => refused((m) => (m.routes[0]!.chunk = 1)));
  test('middleware pointing at a route chunk', () => refused((m) => (m.middleware = 0)));
  test('unknown method', () => refused((m) => ((m.routes[0] as { method: string }).method = 'BREW')));
  test('unknown field type', () => refused((m) => ((m.types[0]!.fields[0] as { type: string }).type = 'blob')));
  test('missing file name', () => refused((m) => ((m as { file: unknown }).file = undefined)));
  test('code that is not int32 data', () => refused((m) => ((m.chunks[0] as { code: unknown }).code = [1, 2])));
  test('schema nested too deep', () =>
    refused((m) => {
      let deep: Record<string, unknown> = {};
      const root = deep;
      for (let i = 0; i < 100; i++) deep = (deep.x = {}) as Record<string, unknown>;
      m.routes[0]!.responses[0]!.schema = root;
    }));
});

describe('artefact fuzz', () => {
  const valid = encodeModule(handModule());
  const signature = valid.subarray(0, 1 + ARTEFACT_MAGIC.length);

  test('random bytes are refused with ArtefactError only', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (bytes) => {
        assert.ok(decodeOrRefuse(bytes) instanceof ArtefactError);
      }),
      { numRuns: 300 },
    );
  });

  test('random bytes behind a valid signature and format are refused with ArtefactError only', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (tail) => {
        const bytes = new Uint8Array(signature.length + 1 + tail.length);
        bytes.set(signature);
        bytes[signature.length] = FORMAT_VERSION;
        bytes.set(tail, signature.length + 1);
        assert.ok(decodeOrRefuse(bytes) instanceof ArtefactError);
      }),
      { numRuns: 300 },
    );
  });

  test('bit flips of a valid artefact are always refused', () => {
    fc.assert(
      fc.property(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 7 }), (index, bit) => {
        const bytes = Uint8Array.from(valid);
        bytes[index]! ^= 1 << bit;
        assert.ok(decodeOrRefuse(bytes) instanceof ArtefactError);
      }),
      { numRuns: 400 },
    );
  });

  test('any msgpack value as header or body, behind a good checksum, throws only ArtefactError', () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), (header, body) => {
        decodeOrRefuse(encodeEnvelope(ARTEFACT_MAGIC, header, body));
      }),
      { numRuns: 300 },
    );
  });

  test('random damage to code words either decodes to a valid module or is refused', () => {
    fc.assert(
      fc.property(fc.nat(2), fc.nat(40), fc.integer({ min: -3, max: 60 }), (chunk, index, value) => {
        const m = handModule();
        const code = m.chunks[chunk]!.code;
        code[index % code.length] = value;
        const result = decodeOrRefuse(encodeModule(m));
        if (!(result instanceof ArtefactError)) assert.deepStrictEqual(validateModule(result), result);
      }),
      { numRuns: 400 },
    );
  });
});
