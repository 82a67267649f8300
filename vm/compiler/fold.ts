/**
 * Constant folding: evaluates an expression at compile time when every operand is a literal,
 * with exactly the runtime semantics of vm/values.ts. Anything that would raise a runtime error
 * (division by zero, arithmetic on text, comparing a number with text) is left unfolded.
 */
import type { BinaryOp, Expr, Literal } from '../front/ast.js';
import { isTruthy, power, toText, valuesEqual } from '../values.js';

/** A folded value; wrapped so that a folded `null` differs from "not constant". */
export interface Folded {
  value: Literal;
}

/** The value of a name that is a constant (a `const` of the file), or null. */
export type ConstLookup = (name: string) => Folded | null;

/**
 * The compile-time value of `expr`, or null when it is not a constant (or would fail at runtime).
 * `names` gives the constants a name may stand for.
 */
export function fold(expr: Expr, names?: ConstLookup): Folded | null {
  switch (expr.kind) {
    case 'Literal':
      return { value: expr.value };
    case 'Name':
      return names?.(expr.name) ?? null;
    case 'Template': {
      let text = '';
      for (const part of expr.parts) {
        if (typeof part === 'string') {
          text += part;
          continue;
        }
        const folded = fold(part, names);
        if (!folded) return null;
        text += toText(folded.value);
      }
      return { value: text };
    }
    case 'Unary': {
      const operand = fold(expr.operand, names);
      if (!operand) return null;
      if (expr.op === '!') return { value: !isTruthy(operand.value) };
      return typeof operand.value === 'number' ? { value: -operand.value } : null;
    }
    case 'Binary': {
      const left = fold(expr.left, names);
      if (!left) return null;
      const right = fold(expr.right, names);
      if (!right) return null;
      return foldBinary(expr.op, left.value, right.value);
    }
    case 'Logical': {
      const left = fold(expr.left, names);
      if (!left) return null;
      if (shortCircuits(expr.op, left.value)) return left;
      return fold(expr.right, names);
    }
    case 'Conditional': {
      const cond = fold(expr.cond, names);
      if (!cond) return null;
      return fold(isTruthy(cond.value) ? expr.then : expr.otherwise, names);
    }
    default:
      return null;
  }
}

/** Whether a logical operator with this left value yields the left value without looking right. */
export function shortCircuits(op: '&&' | '||' | '??', left: Literal): boolean {
  switch (op) {
    case '&&':
      return !isTruthy(left);
    case '||':
      return isTruthy(left);
    case '??':
      return left !== null;
  }
}

/** Folds one binary operation over literals, or null when the runtime would raise an error. */
export function foldBinary(op: BinaryOp, a: Literal, b: Literal): Folded | null {
  switch (op) {
    case '==':
      return { value: valuesEqual(a, b) };
    case '!=':
      return { value: !valuesEqual(a, b) };
    case '+':
      if (typeof a === 'string' || typeof b === 'string') return { value: toText(a) + toText(b) };
      return typeof a === 'number' && typeof b === 'number' ? { value: a + b } : null;
    case '<':
    case '<=':
    case '>':
    case '>=':
      if ((typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string')) {
        return { value: compare(op, a, b) };
      }
      return null;
  }
  if (typeof a !== 'number' || typeof b !== 'number') return null;
  switch (op) {
    case '-':
      return { value: a - b };
    case '*':
      return { value: a * b };
    case '/':
      return b === 0 ? null : { value: a / b };
    case '%':
      return b === 0 ? null : { value: a % b };
    case '**':
      try {
        return { value: power(a, b) };
      } catch {
        return null;
      }
  }
}

function compare(op: '<' | '<=' | '>' | '>=', a: number | string, b: number | string): boolean {
  switch (op) {
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
  }
}
