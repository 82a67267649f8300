/**
 * Argument counts against declared parameters: the one check behind native calls, guard uses and
 * validator uses, so all three count optional and rest parameters alike.
 */
import type { ParamSpec } from '../plugins/sdk.js';

/** Null when `argc` arguments fit `params`; else what they expect: `2`, `1 to 2`, `at least 1`. */
export function arityMismatch(params: readonly ParamSpec[], argc: number): string | null {
  const required = params.filter((p) => !p.optional && !p.rest).length;
  const rest = params.some((p) => p.rest);
  if (argc >= required && (rest || argc <= params.length)) return null;
  if (rest) return `at least ${required}`;
  return required === params.length ? String(required) : `${required} to ${params.length}`;
}
