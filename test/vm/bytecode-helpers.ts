/**
 * Test helpers for compiled chunks: a tiny disassembler (opcode names with operands) and a
 * stack-depth simulator that walks every path of a chunk using the opcode table.
 */
import type { ChunkData } from '../../vm/bytecode/module.js';
import { INSTRUCTION_SIZE, OPCODES, Op, stackEffect } from '../../vm/bytecode/opcodes.js';

/** One decoded instruction. */
export interface Instr {
  offset: number;
  op: Op;
  name: string;
  operands: number[];
}

/** Decodes a chunk's code into instructions. */
export function decode(chunk: ChunkData): Instr[] {
  const out: Instr[] = [];
  let pc = 0;
  while (pc < chunk.code.length) {
    const op = chunk.code[pc]! as Op;
    const info = OPCODES[op];
    if (!info) throw new Error(`bad opcode ${op} at ${pc}`);
    const operands = Array.from(chunk.code.subarray(pc + 1, pc + INSTRUCTION_SIZE[op]!));
    out.push({ offset: pc, op, name: info.name, operands });
    pc += INSTRUCTION_SIZE[op]!;
  }
  return out;
}

/** Opcode names only: `['CONST', 'RETURN']`. */
export function names(chunk: ChunkData): string[] {
  return decode(chunk).map((i) => i.name);
}

/**
 * Readable listing: `CONST 'x'`, `LOAD_LOCAL 0`, `JUMP @12`, `CALL len/1`. Constants are shown
 * by value, jump targets with `@`, call refs by name and argc.
 */
export function listing(chunk: ChunkData): string[] {
  return decode(chunk).map((i) => {
    const info = OPCODES[i.op]!;
    const parts = info.operands.map((operand, n) => {
      const v = i.operands[n]!;
      switch (operand.kind) {
        case 'const':
          return JSON.stringify(chunk.consts[v]);
        case 'target':
          return `@${v}`;
        case 'ref':
          return `${chunk.refs[v]!.name}/${chunk.refs[v]!.argc}`;
        default:
          return String(v);
      }
    });
    if (i.op === Op.CALL) parts.pop();
    return [i.name, ...parts].join(' ');
  });
}

/**
 * The true maximum operand-stack depth over every path, checking that paths meet with equal
 * depths and that the stack never goes below zero. Throws on an inconsistency.
 */
export function simulateMaxStack(chunk: ChunkData): number {
  const instrs = decode(chunk);
  const byOffset = new Map(instrs.map((i, n) => [i.offset, n]));
  const depthAt = new Map<number, number>();
  const work: [number, number][] = [[0, 0]];
  let max = 0;
  const visit = (offset: number, depth: number) => {
    if (!byOffset.has(offset)) throw new Error(`${chunk.name}: jump to ${offset}, not an instruction`);
    if (depth < 0) throw new Error(`${chunk.name}: negative depth at ${offset}`);
    const known = depthAt.get(offset);
    if (known !== undefined) {
      if (known !== depth) throw new Error(`${chunk.name}: depth ${known} vs ${depth} at ${offset}`);
      return;
    }
    depthAt.set(offset, depth);
    work.push([offset, depth]);
  };
  depthAt.set(0, 0);
  while (work.length > 0) {
    const [offset, depth] = work.pop()!;
    const instr = instrs[byOffset.get(offset)!]!;
    const next = offset + INSTRUCTION_SIZE[instr.op]!;
    const after = depth + stackEffect(instr.op, instr.operands);
    if (after < 0) throw new Error(`${chunk.name}: ${instr.name} at ${offset} pops below zero`);
    max = Math.max(max, depth, after);
    const target = instr.operands[0]!;
    switch (instr.op) {
      case Op.JUMP:
      case Op.LOOP:
        visit(target, depth);
        break;
      case Op.RETURN:
      case Op.FAIL:
      case Op.RESPOND:
        break;
      case Op.JUMP_IF_FALSE:
        visit(target, after);
        visit(next, after);
        break;
      case Op.JUMP_IF_FALSE_OR_POP:
      case Op.JUMP_IF_TRUE_OR_POP:
      case Op.JUMP_IF_NOT_NULL_OR_POP:
        visit(target, depth);
        visit(next, after);
        break;
      case Op.ITER_NEXT:
      case Op.ITER_NEXT_PAIR:
        visit(target, depth - 1);
        visit(next, after);
        break;
      case Op.TRY:
        max = Math.max(max, depth + 1);
        visit(target, depth + 1);
        visit(next, after);
        break;
      default:
        visit(next, after);
    }
  }
  return max;
}
