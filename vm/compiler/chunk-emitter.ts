/**
 * Builds one chunk of bytecode: the code array, the deduplicated constant pool, the line table,
 * the call references and the operand-stack depth (maxStack) tracked from the opcode table.
 */
import type { Literal, Pos } from '../front/ast.js';
import type { CallRef, ChunkData, ChunkKind } from '../bytecode/module.js';
import { type Op, stackEffect } from '../bytecode/opcodes.js';

/**
 * Most constants one chunk may hold. Operands are 32-bit, but a bound keeps a pathological file
 * from bloating artefacts and matches the classic 16-bit constant index of small VMs.
 */
export const MAX_CONSTANTS = 65536;

/** Dedup key of a literal: its type and value (so 1, '1' and true stay apart; -0 stays apart from 0). */
function constKey(value: Literal): string {
  if (value === null) return 'z';
  if (typeof value === 'number') return Object.is(value, -0) ? 'n-0' : `n${value}`;
  return (typeof value === 'string' ? 's' : 'b') + String(value);
}

/** Accumulates one chunk's code; `finish` freezes it into ChunkData. */
export class ChunkEmitter {
  private readonly code: number[] = [];
  private readonly consts: Literal[] = [];
  private readonly constIndex = new Map<string, number>();
  private readonly lines: number[] = [];
  readonly refs: CallRef[] = [];
  private lastLine = -1;
  private lastCol = -1;
  /** Operand-stack depth at the current emit position. */
  depth = 0;
  maxStack = 0;
  /** Set once the constant pool would exceed MAX_CONSTANTS. */
  constantsOverflowed = false;

  /** Offset the next instruction will have. */
  here(): number {
    return this.code.length;
  }

  /** Appends one instruction at source position `at`; returns its offset. */
  emit(op: Op, operands: readonly number[], at: Pos): number {
    const offset = this.code.length;
    if (at.line !== this.lastLine || at.col !== this.lastCol) {
      this.lines.push(offset, at.line, at.col);
      this.lastLine = at.line;
      this.lastCol = at.col;
    }
    this.code.push(op, ...operands);
    this.setDepth(this.depth + stackEffect(op, operands));
    return offset;
  }

  /** Emits a forward jump with a placeholder target; returns the operand position for `patch`. */
  emitJump(op: Op, at: Pos): number {
    const offset = this.emit(op, [-1], at);
    return offset + 1;
  }

  /** Points a forward jump operand at the current offset. */
  patch(operandAt: number): void {
    this.code[operandAt] = this.code.length;
  }

  /** Sets the tracked depth, for the paths the table's fall-through effect does not describe. */
  setDepth(depth: number): void {
    this.depth = depth;
    if (depth > this.maxStack) this.maxStack = depth;
  }

  /** Index of `value` in the constant pool, adding it when new. */
  constant(value: Literal): number {
    const key = constKey(value);
    const known = this.constIndex.get(key);
    if (known !== undefined) return known;
    if (this.consts.length >= MAX_CONSTANTS) {
      this.constantsOverflowed = true;
      return 0;
    }
    this.consts.push(value);
    this.constIndex.set(key, this.consts.length - 1);
    return this.consts.length - 1;
  }

  /** Adds a call reference; returns its index. */
  ref(ref: CallRef): number {
    this.refs.push(ref);
    return this.refs.length - 1;
  }

  /** The finished chunk. */
  finish(name: string, kind: ChunkKind, arity: number, slots: number): ChunkData {
    return {
      name,
      kind,
      arity,
      slots,
      maxStack: this.maxStack,
      code: Int32Array.from(this.code),
      consts: this.consts,
      lines: Int32Array.from(this.lines),
      refs: this.refs,
    };
  }
}
