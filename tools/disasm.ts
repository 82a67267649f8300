/**
 * The bytecode disassembler behind `rvm disasm`: a clox / `luac -l` style listing, one line per
 * instruction. Everything about an instruction (its name, operand count and operand kinds) is
 * read from the OPCODES table, so a new opcode is listed correctly without touching this file.
 *
 *     == route GET /users/:id ==  (route; arity 0, slots 1, max stack 2)
 *                 ; user = params.id
 *     0000    3  LOAD_AMBIENT             params
 *     0002    |  GET_FIELD                #0 "id"
 */
import { lineOf } from '../vm/diagnostics.js';
import type { ChunkData, CompiledModule } from '../vm/bytecode/module.js';
import { AMBIENT_NAMES, INSTRUCTION_SIZE, OPCODES, type OperandKind } from '../vm/bytecode/opcodes.js';

/** What a listing may know beyond the chunk itself. */
export interface DisasmOptions {
  /** The source text the chunk was compiled from: each new line is printed before its code. */
  source?: string;
  /** Names of the linked program's natives, for CALL_NATIVE operands. */
  natives?: readonly string[];
  /** Names of the linked program's chunks, for CALL_FN operands. */
  chunks?: readonly string[];
}

/** Width of the opcode-name column: the longest name plus a space. */
const NAME_WIDTH = Math.max(...OPCODES.map((o) => o.name.length)) + 1;
/** Where the name column starts: offset (4), gap (2), line (4), gap (2). */
const LEAD_WIDTH = 4 + 2 + 4 + 2;

const pad4 = (n: number): string => String(n).padStart(4, '0');

/** A constant as it would be written in source: text quoted and escaped, so it stays one line. */
function renderConst(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

type Render = (value: number, name: string, chunk: ChunkData, options: DisasmOptions) => string;

/** One renderer per operand kind. */
const RENDER: Record<OperandKind, Render> = {
  const: (v, _n, c) => `#${v} ${v >= 0 && v < c.consts.length ? renderConst(c.consts[v]) : '?'}`,
  slot: (v) => `slot ${v}`,
  ambient: (v) => AMBIENT_NAMES[v] ?? `ambient ${v}?`,
  count: (v, name) => `${name}=${v}`,
  target: (v) => `-> ${pad4(v)}`,
  ref: (v, _n, c) => {
    const ref = c.refs[v];
    if (!ref) return `@${v} ?`;
    const mode = ref.mode === 'optional' ? ' optional' : '';
    return `@${v} ${ref.kind === 'guard' ? 'guard ' : ''}${ref.name}/${ref.argc}${mode}`;
  },
  chunk: (v, _n, _c, o) => (o.chunks?.[v] !== undefined ? `chunk ${v} (${o.chunks[v]})` : `chunk ${v}`),
  lambda: (v) => `lambda chunk ${v}`,
  native: (v, _n, _c, o) => (o.natives?.[v] !== undefined ? `native ${v} (${o.natives[v]})` : `native ${v}`),
  section: (v) => (v === 0 ? 'body' : v === 1 ? 'query' : `section ${v}?`),
};

/** The source line of each code offset, from the (offset, line, col) triples; 0 when unknown. */
function lineAt(chunk: ChunkData): (offset: number) => number {
  const { lines } = chunk;
  let i = 0;
  let current = 0;
  // Offsets are asked in increasing order, so one forward walk over the table suffices.
  return (offset) => {
    while (i + 2 < lines.length && lines[i]! <= offset) {
      current = lines[i + 1]!;
      i += 3;
    }
    return current;
  };
}

/** Lists one chunk, one line per instruction, with source lines when `options.source` is given. */
export function disassembleChunk(chunk: ChunkData, options: DisasmOptions = {}): string {
  const out = [`== ${chunk.name} ==  (${chunk.kind}; arity ${chunk.arity}, slots ${chunk.slots}, max stack ${chunk.maxStack})`];
  const { code } = chunk;
  const lineOfOffset = lineAt(chunk);
  let previousLine = -1;
  let pc = 0;
  while (pc < code.length) {
    const line = lineOfOffset(pc);
    if (line !== previousLine && options.source !== undefined && line > 0) {
      out.push(`${' '.repeat(LEAD_WIDTH)}; ${lineOf(options.source, line).trim()}`);
    }
    const lineText = line === previousLine ? '   |' : line > 0 ? String(line).padStart(4) : '   ?';
    previousLine = line;
    const op = code[pc]!;
    const info = OPCODES[op];
    if (!info) {
      out.push(`${pad4(pc)}  ${lineText}  ??? ${op}`);
      pc += 1;
      continue;
    }
    const size = INSTRUCTION_SIZE[op]!;
    const operands = info.operands.map(({ name, kind }, i) =>
      pc + 1 + i < code.length ? RENDER[kind](code[pc + 1 + i]!, name, chunk, options) : '(cut short)',
    );
    out.push(`${pad4(pc)}  ${lineText}  ${operands.length === 0 ? info.name : info.name.padEnd(NAME_WIDTH) + operands.join('  ')}`);
    pc += size;
  }
  return out.join('\n') + '\n';
}

/** Lists every chunk of a module under a header naming its file, compiler and source hash. */
export function disassembleModule(m: CompiledModule, source?: string): string {
  const h = m.header;
  const head = `; ${m.file}  (format ${h.format}, compiler ${h.compiler}, sha256 ${h.sourceHash.slice(0, 12)}, plugins ${h.plugins.slice(0, 12) || '-'})\n`;
  const options: DisasmOptions = source === undefined ? {} : { source };
  return [head, ...m.chunks.map((c) => disassembleChunk(c, options))].join('\n');
}
