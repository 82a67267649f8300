/**
 * Argument counts against declared parameters: the one check behind native calls, guard uses and
 * validator uses, so all three count optional and rest parameters alike.
 */
import type { ParamSpec } from './host/natives.js';

/** Null when `argc` arguments fit `params`; else what they expect: `2`, `1 to 2`, `at least 1`. */
export function arityMismatch(params: readonly ParamSpec[], argc: number): string | null {
  const required = params.filter((p) => !p.optional && !p.rest).length;
  const rest = params.some((p) => p.rest);
  if (argc >= required && (rest || argc <= params.length)) return null;
  if (rest) return `at least ${required}`;
  return required === params.length ? String(required) : `${required} to ${params.length}`;
}

/** The E_ARITY wording for an expectation of arityMismatch: `takes 1 argument`, `takes 1 to 2 arguments`. */
export function takesArguments(expected: string): string {
  return `takes ${expected} argument${expected === '1' || expected === 'at least 1' ? '' : 's'}`;
}
