/**
 * The verifier: checks a decoded module field by field and instruction by instruction (shapes,
 * opcodes, operand ranges, stack effects, chunk references) and returns a fresh, exactly typed
 * copy, so no artefact, however damaged, can make the VM index outside its code, constants, slots
 * or tables (Lua's `lundump.c` habit). Throws ArtefactError E_ARTEFACT_CORRUPT naming the first
 * problem.
 */
import { FIELD_TYPES, HTTP_METHODS, type Constant, type Literal, type PathSegment } from '../lang.js';
import {
  ARTEFACT_MAGIC,
  FORMAT_VERSION,
  type ArgShape,
  type CallRef,
  type CallableMeta,
  type ConstMeta,
  type MiddlewareMeta,
  type ChunkData,
  type ChunkKind,
  type CompiledModule,
  type DecoratorMeta,
  type FieldMeta,
  type GuardUseMeta,
  type JsonSchema,
  type ResponseMeta,
  type RouteMeta,
  type TypeMeta,
} from './module.js';
import { AMBIENT_NAMES, INSTRUCTION_SIZE, OPCODES, Op, stackEffect } from './opcodes.js';
import { ARTEFACT } from '../errors.js';
import { ArtefactError, int32sFromBytes, unpack } from './codec.js';
/** Largest `slots`/`maxStack` a chunk may declare: far above anything the compiler emits, and
 * small enough that a damaged header cannot make the VM allocate a huge frame. */
export const MAX_CHUNK_SLOTS = 65_536;

export const MAX_CHUNK_STACK = 65_536;

/** Nesting limit for JSON data (schemas, config) read from an artefact: guards the recursion. */
export const MAX_JSON_DEPTH = 64;

/** Opcodes after which execution never falls through to the next instruction. */
const TERMINATORS: ReadonlySet<number> = new Set([Op.RETURN, Op.JUMP, Op.LOOP, Op.FAIL, Op.RESPOND, Op.THROW]);

const CHUNK_KINDS: readonly ChunkKind[] = ['route', 'fn', 'guard', 'middleware', 'lambda'];

const SEGMENT_KINDS: readonly PathSegment['kind'][] = ['static', 'param', 'wildcard'];

const CONTENT_TYPES: readonly ResponseMeta['contentType'][] = ['application/json', 'text/plain', 'text/html', null];

/**
 * Checks a module as decodeModule does (shapes, opcodes, operand ranges, chunk references) and
 * returns a clean copy; throws ArtefactError E_ARTEFACT_CORRUPT naming the first problem.
 */
export function validateModule(m: unknown): CompiledModule {
  const o = record(m, 'module');
  return readModule(o.header, o, false);
}

function corrupt(message: string): never {
  throw new ArtefactError(ARTEFACT.E_ARTEFACT_CORRUPT, `damaged module artefact: ${message}`);
}

export function record(v: unknown, at: string): Record<string, unknown> {
  const proto = typeof v === 'object' && v !== null && !Array.isArray(v) ? Object.getPrototypeOf(v) : undefined;
  if (proto !== Object.prototype && proto !== null) corrupt(`${at}: expected a map`);
  return v as Record<string, unknown>;
}

function list(v: unknown, at: string): unknown[] {
  if (!Array.isArray(v)) corrupt(`${at}: expected a list`);
  return v;
}

function str(v: unknown, at: string): string {
  if (typeof v !== 'string') corrupt(`${at}: expected text`);
  return v;
}

function strOrNull(v: unknown, at: string): string | null {
  return v === null ? null : str(v, at);
}

function bool(v: unknown, at: string): boolean {
  if (typeof v !== 'boolean') corrupt(`${at}: expected a boolean`);
  return v;
}

function int(v: unknown, at: string, min = 0, max = 2 ** 31 - 1): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) corrupt(`${at}: expected an integer in ${min}..${max}`);
  return v;
}

function oneOf<T>(v: unknown, options: readonly T[], at: string): T {
  if (!options.includes(v as T)) corrupt(`${at}: unexpected value ${JSON.stringify(v) ?? String(v)}`);
  return v as T;
}

function literal(v: unknown, at: string): Literal {
  if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  return corrupt(`${at}: expected a literal`);
}

function literals(v: unknown, at: string): Literal[] {
  return list(v, at).map((x, i) => literal(x, `${at}[${i}]`));
}

/** Plain JSON data (schemas, config): literals, lists and maps, nested at most MAX_JSON_DEPTH. */
export function jsonData(v: unknown, at: string, depth = 0): unknown {
  if (depth > MAX_JSON_DEPTH) corrupt(`${at}: nested deeper than ${MAX_JSON_DEPTH}`);
  if (Array.isArray(v)) return v.map((x, i) => jsonData(x, `${at}[${i}]`, depth + 1));
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(record(v, at))) {
      // defineProperty keeps a key named __proto__ an ordinary key.
      Object.defineProperty(out, key, { value: jsonData(value, `${at}.${key}`, depth + 1), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return literal(v, at);
}

function int32s(v: unknown, at: string): Int32Array {
  if (v instanceof Int32Array) return Int32Array.from(v);
  if (v instanceof Uint8Array) return int32sFromBytes(v, at);
  return corrupt(`${at}: expected int32 bytes`);
}

/**
 * Reads a module. `packed`: as an artefact stores it, each chunk and each `responses` list a bin
 * holding one msgpack value; otherwise (validateModule) those are plain data already.
 */
export function readModule(headerValue: unknown, bodyValue: unknown, packed: boolean): CompiledModule {
  const h = record(headerValue, 'header');
  const b = record(bodyValue, 'body');
  const unpacked = packed ? unpackBin : (v: unknown) => v;
  const responsesOf: ResponsesReader = (v, at) => readResponses(unpacked(v, at), at);
  const chunks = list(b.chunks, 'chunks').map((c, i) => readChunk(unpacked(c, `chunks[${i}]`), `chunks[${i}]`));
  const chunkOf = (v: unknown, kind: ChunkKind, at: string): number => {
    const index = int(v, at, 0, chunks.length - 1);
    if (chunks[index]!.kind !== kind) corrupt(`${at}: chunk ${index} is a ${chunks[index]!.kind} chunk, expected ${kind}`);
    return index;
  };
  chunks.forEach((c, i) => {
    for (let pc = 0; pc < c.code.length; pc += INSTRUCTION_SIZE[c.code[pc]!]!) {
      if (c.code[pc] === Op.MAKE_LAMBDA) chunkOf(c.code[pc + 2], 'lambda', `chunks[${i}] at ${pc}: MAKE_LAMBDA`);
    }
  });
  return {
    header: {
      magic: oneOf(h.magic, [ARTEFACT_MAGIC] as const, 'header.magic'),
      format: oneOf(h.format, [FORMAT_VERSION], 'header.format'),
      compiler: str(h.compiler, 'header.compiler'),
      sourceHash: str(h.sourceHash, 'header.sourceHash'),
      plugins: str(h.plugins, 'header.plugins'),
    },
    file: str(b.file, 'file'),
    chunks,
    routes: list(b.routes, 'routes').map((r, i) => readRoute(r, `routes[${i}]`, chunkOf, responsesOf)),
    functions: list(b.functions, 'functions').map((f, i) => readCallable(f, `functions[${i}]`, (v, at) => chunkOf(v, 'fn', at), responsesOf)),
    guards: list(b.guards, 'guards').map((g, i) => readCallable(g, `guards[${i}]`, (v, at) => chunkOf(v, 'guard', at), responsesOf)),
    types: list(b.types, 'types').map((t, i) => readType(t, `types[${i}]`)),
    middleware: b.middleware === null ? null : chunkOf(b.middleware, 'middleware', 'middleware'),
    ...(b.middlewareMeta === undefined ? {} : { middlewareMeta: readMiddlewareMeta(b.middlewareMeta, 'middlewareMeta', responsesOf) }),
    ...(b.consts === undefined ? {} : { consts: list(b.consts, 'consts').map((c, i) => readConst(c, `consts[${i}]`)) }),
  };
}

function readConst(v: unknown, at: string): ConstMeta {
  const o = record(v, at);
  const value = o.value;
  if (!(value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)))) {
    corrupt(`${at}.value: not a number, text, bool or null`);
  }
  return { name: str(o.name, `${at}.name`), value, line: int(o.line, `${at}.line`), col: int(o.col, `${at}.col`) };
}

function readMiddlewareMeta(v: unknown, at: string, responsesOf: ResponsesReader): MiddlewareMeta {
  const o = record(v, at);
  const names = (value: unknown, where: string): string[] => list(value, where).map((n, i) => str(n, `${where}[${i}]`));
  return {
    doc: strOrNull(o.doc, `${at}.doc`),
    line: int(o.line, `${at}.line`),
    responses: responsesOf(o.responses, `${at}.responses`),
    headers: names(o.headers, `${at}.headers`),
    cookies: names(o.cookies, `${at}.cookies`),
  };
}

function readRef(v: unknown, at: string): CallRef {
  const o = record(v, at);
  const ref: CallRef = {
    name: str(o.name, `${at}.name`),
    kind: oneOf(o.kind, ['call', 'guard', 'record', 'const'] as const, `${at}.kind`),
    argc: int(o.argc, `${at}.argc`),
    line: int(o.line, `${at}.line`),
    col: int(o.col, `${at}.col`),
  };
  if (o.mode !== undefined) ref.mode = oneOf(o.mode, ['required', 'optional'] as const, `${at}.mode`);
  if (o.args !== undefined) ref.args = list(o.args, `${at}.args`).map((a, i) => readShape(a, `${at}.args[${i}]`, 0));
  if (o.lambdas !== undefined) {
    ref.lambdas = list(o.lambdas, `${at}.lambdas`).map((pair, i) => {
      const [arg, params] = list(pair, `${at}.lambdas[${i}]`);
      return [int(arg, `${at}.lambdas[${i}][0]`), int(params, `${at}.lambdas[${i}][1]`)];
    });
  }
  return ref;
}

/** One argument shape of a call reference (module.ts ArgShape), nested at most MAX_JSON_DEPTH. */
function readShape(v: unknown, at: string, depth: number): ArgShape {
  if (depth > MAX_JSON_DEPTH) corrupt(`${at}: nested deeper than ${MAX_JSON_DEPTH}`);
  const o = record(v, at);
  switch (oneOf(o.k, ['c', 'o', 'l', 'r', 'u'] as const, `${at}.k`)) {
    case 'c':
      return { k: 'c', v: jsonData(o.v, `${at}.v`, depth + 1) as Constant };
    case 'o':
      return {
        k: 'o',
        e: list(o.e, `${at}.e`).map((entry, i) => {
          const pair = list(entry, `${at}.e[${i}]`);
          if (pair.length !== 2) corrupt(`${at}.e[${i}]: expected a key and a shape`);
          return [str(pair[0], `${at}.e[${i}][0]`), readShape(pair[1], `${at}.e[${i}][1]`, depth + 1)] as [string, ArgShape];
        }),
      };
    case 'l':
      return { k: 'l', i: list(o.i, `${at}.i`).map((item, i) => readShape(item, `${at}.i[${i}]`, depth + 1)) };
    case 'r':
      return { k: 'r', s: str(o.s, `${at}.s`) };
    case 'u':
      return { k: 'u' };
  }
}

function readChunk(v: unknown, at: string): ChunkData {
  const o = record(v, at);
  const arity = int(o.arity, `${at}.arity`, 0, MAX_CHUNK_SLOTS);
  const chunk: ChunkData = {
    name: str(o.name, `${at}.name`),
    kind: oneOf(o.kind, CHUNK_KINDS, `${at}.kind`),
    arity,
    slots: int(o.slots, `${at}.slots`, arity, MAX_CHUNK_SLOTS),
    maxStack: int(o.maxStack, `${at}.maxStack`, 0, MAX_CHUNK_STACK),
    code: int32s(o.code, `${at}.code`),
    consts: literals(o.consts, `${at}.consts`),
    lines: int32s(o.lines, `${at}.lines`),
    refs: list(o.refs, `${at}.refs`).map((r, i) => readRef(r, `${at}.refs[${i}]`)),
  };
  checkCode(chunk, at);
  checkLines(chunk, at);
  return chunk;
}

/** Walks the code once: known opcodes, whole instructions, every operand inside its table. */
function checkCode(c: ChunkData, at: string): void {
  const { code } = c;
  if (code.length === 0) corrupt(`${at}: empty code`);
  const starts = new Uint8Array(code.length);
  const targets: { pc: number; target: number }[] = [];
  let pc = 0;
  let last = -1;
  while (pc < code.length) {
    const op = code[pc]!;
    const info = OPCODES[op];
    if (!info) corrupt(`${at} at ${pc}: unknown opcode ${op}`);
    if (pc + INSTRUCTION_SIZE[op]! > code.length) corrupt(`${at} at ${pc}: ${info.name} is cut short`);
    starts[pc] = 1;
    info.operands.forEach(({ name, kind }, i) => {
      const value = code[pc + 1 + i]!;
      const where = `${at} at ${pc}: ${info.name} operand ${name}=${value}`;
      const within = (size: number, table: string) => {
        if (value < 0 || value >= size) corrupt(`${where} is outside ${table} (size ${size})`);
      };
      switch (kind) {
        case 'const':
          return within(c.consts.length, 'the constants');
        case 'slot':
          return within(c.slots, 'the local slots');
        case 'ambient':
          return within(AMBIENT_NAMES.length, 'the ambient names');
        case 'ref':
          return within(c.refs.length, 'the call references');
        case 'section':
          return within(2, 'the sections (0 body, 1 query)');
        case 'count':
          return within(MAX_CHUNK_STACK + 1, 'the operand counts');
        case 'target':
          within(code.length, 'the code');
          targets.push({ pc, target: value });
          return;
        case 'lambda':
          // A module index: readModule checks it against the module's chunks.
          return;
        case 'chunk':
        case 'native':
          // Only the loader writes linked indices; an artefact holds unlinked CALLs.
          return corrupt(`${where}: linked instruction in an unlinked artefact`);
      }
    });
    const operands = code.subarray(pc + 1, pc + INSTRUCTION_SIZE[op]!);
    // A counted instruction takes its values from the stack, so it can't take more than the
    // chunk's stack holds; this keeps a damaged count from reaching below the frame.
    if (typeof info.pop === 'string' && info.push - stackEffect(op, operands) > c.maxStack)
      corrupt(`${at} at ${pc}: ${info.name} takes more values than the chunk stack holds (${c.maxStack})`);
    const refAt = info.operands.findIndex((o) => o.kind === 'ref');
    const argcAt = info.operands.findIndex((o) => o.name === 'argc');
    if (refAt >= 0 && argcAt >= 0 && c.refs[operands[refAt]!]!.argc !== operands[argcAt])
      corrupt(`${at} at ${pc}: ${info.name} argc differs from its call reference`);
    last = op;
    pc += INSTRUCTION_SIZE[op]!;
  }
  for (const { pc: from, target } of targets) if (!starts[target]) corrupt(`${at} at ${from}: jump into the middle of an instruction (${target})`);
  if (!TERMINATORS.has(last)) corrupt(`${at}: code runs off its end (last instruction ${OPCODES[last]!.name})`);
}

/** Line table triples (offset, line, col) with offsets inside the code, in order. */
function checkLines(c: ChunkData, at: string): void {
  const { lines } = c;
  if (lines.length % 3 !== 0) corrupt(`${at}.lines: not a list of (offset, line, col) triples`);
  let previous = 0;
  for (let i = 0; i < lines.length; i += 3) {
    const offset = lines[i]!;
    if (offset < previous || offset >= c.code.length) corrupt(`${at}.lines[${i / 3}]: offset ${offset} out of order or outside the code`);
    if (lines[i + 1]! < 0 || lines[i + 2]! < 0) corrupt(`${at}.lines[${i / 3}]: negative position`);
    previous = offset;
  }
}

function readDecorator(v: unknown, at: string): DecoratorMeta {
  const o = record(v, at);
  // jsonData admits exactly literals, lists and objects of them: a Constant.
  const args = list(o.args, `${at}.args`).map((x, i) => jsonData(x, `${at}.args[${i}]`) as Constant);
  return { name: str(o.name, `${at}.name`), args, line: int(o.line, `${at}.line`), col: int(o.col, `${at}.col`) };
}

function readField(v: unknown, at: string): FieldMeta {
  const o = record(v, at);
  return {
    name: str(o.name, `${at}.name`),
    type: oneOf(o.type, FIELD_TYPES, `${at}.type`),
    optional: bool(o.optional, `${at}.optional`),
    required: bool(o.required, `${at}.required`),
    decorators: list(o.decorators, `${at}.decorators`).map((d, i) => readDecorator(d, `${at}.decorators[${i}]`)),
    doc: strOrNull(o.doc, `${at}.doc`),
    line: int(o.line, `${at}.line`),
    col: int(o.col, `${at}.col`),
  };
}

function readFields(v: unknown, at: string): FieldMeta[] | null {
  return v === null ? null : list(v, at).map((f, i) => readField(f, `${at}[${i}]`));
}

function readRoute(v: unknown, at: string, chunkOf: (v: unknown, kind: ChunkKind, at: string) => number, responsesOf: ResponsesReader): RouteMeta {
  const o = record(v, at);
  return {
    method: oneOf(o.method, HTTP_METHODS, `${at}.method`),
    path: str(o.path, `${at}.path`),
    openapiPath: str(o.openapiPath, `${at}.openapiPath`),
    segments: list(o.segments, `${at}.segments`).map((s, i) => {
      const seg = record(s, `${at}.segments[${i}]`);
      return { kind: oneOf(seg.kind, SEGMENT_KINDS, `${at}.segments[${i}].kind`), value: str(seg.value, `${at}.segments[${i}].value`) };
    }),
    params: list(o.params, `${at}.params`).map((p, i) => str(p, `${at}.params[${i}]`)),
    chunk: chunkOf(o.chunk, 'route', `${at}.chunk`),
    guards: list(o.guards, `${at}.guards`).map((g, i): GuardUseMeta => {
      const use = record(g, `${at}.guards[${i}]`);
      const gat = `${at}.guards[${i}]`;
      return {
        name: str(use.name, `${gat}.name`),
        args: literals(use.args, `${gat}.args`),
        mode: oneOf(use.mode, ['required', 'optional'] as const, `${gat}.mode`),
        line: int(use.line, `${gat}.line`),
        col: int(use.col, `${gat}.col`),
      };
    }),
    body: readFields(o.body, `${at}.body`),
    query: readFields(o.query, `${at}.query`),
    responses: responsesOf(o.responses, `${at}.responses`),
    doc: strOrNull(o.doc, `${at}.doc`),
    line: int(o.line, `${at}.line`),
    col: int(o.col, `${at}.col`),
  };
}

/** Reads a `responses` list: packed in an artefact body, or a plain list in a module in memory. */
type ResponsesReader = (v: unknown, at: string) => ResponseMeta[];

/** A packed value of an artefact: a bin holding exactly one msgpack value. */
function unpackBin(v: unknown, at: string): unknown {
  if (!(v instanceof Uint8Array)) corrupt(`${at}: expected packed msgpack bytes`);
  try {
    return unpack(v);
  } catch {
    return corrupt(`${at}: unreadable packed msgpack data`);
  }
}

function readResponses(v: unknown, at: string): ResponseMeta[] {
  return list(v, at).map((r, i): ResponseMeta => {
    const rat = `${at}[${i}]`;
    const res = record(r, rat);
    return {
      status: int(res.status, `${rat}.status`, 100, 599),
      source: str(res.source, `${rat}.source`),
      contentType: oneOf(res.contentType, CONTENT_TYPES, `${rat}.contentType`),
      schema: record(jsonData(res.schema, `${rat}.schema`), `${rat}.schema`) as JsonSchema,
      line: int(res.line, `${rat}.line`),
    };
  });
}

function readCallable(v: unknown, at: string, chunkOf: (v: unknown, at: string) => number, responsesOf: ResponsesReader): CallableMeta {
  const o = record(v, at);
  const meta: CallableMeta = {
    name: str(o.name, `${at}.name`),
    chunk: chunkOf(o.chunk, `${at}.chunk`),
    params: list(o.params, `${at}.params`).map((p, i) => str(p, `${at}.params[${i}]`)),
    doc: strOrNull(o.doc, `${at}.doc`),
    line: int(o.line, `${at}.line`),
    col: int(o.col, `${at}.col`),
  };
  if (o.responses !== undefined) meta.responses = responsesOf(o.responses, `${at}.responses`);
  if (o.returns !== undefined) meta.returns = record(jsonData(o.returns, `${at}.returns`), `${at}.returns`) as JsonSchema;
  return meta;
}

function readType(v: unknown, at: string): TypeMeta {
  const o = record(v, at);
  return {
    name: str(o.name, `${at}.name`),
    fields: list(o.fields, `${at}.fields`).map((f, i) => readField(f, `${at}.fields[${i}]`)),
    doc: strOrNull(o.doc, `${at}.doc`),
    line: int(o.line, `${at}.line`),
    col: int(o.col, `${at}.col`),
  };
}
