/**
 * Route paths: splits `/users/:id/files/*rest` into segments and finds the first problem.
 */
import type { PathSegment } from './ast.js';

/** What is wrong with a path, `offset` columns into it. */
export interface PathProblem {
  offset: number;
  length: number;
  message: string;
  hint?: string;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const STATIC = /^(?:[A-Za-z0-9._~-]|%[0-9A-Fa-f]{2})+$/;
const STATIC_CHAR = /[A-Za-z0-9._~-]/;

/**
 * The segments of a route path (`/` alone is the root, with none) and its first problem, if any:
 * empty or dot segments, a trailing slash, a bad character, a malformed or duplicate parameter,
 * or a wildcard that is not last.
 */
export function parseRoutePath(path: string): { segments: PathSegment[]; problem: PathProblem | null } {
  const segments: PathSegment[] = [];
  const fail = (offset: number, length: number, message: string, hint?: string) => ({ segments, problem: { offset, length, message, hint } });
  if (!path.startsWith('/')) return fail(0, path.length, "a route path starts with '/'");
  if (path === '/') return { segments, problem: null };
  if (path.endsWith('/')) {
    return fail(path.length - 1, 1, 'a route path does not end with /', `write '${path.replace(/\/+$/, '') || '/'}'`);
  }
  const parts = path.slice(1).split('/');
  const names = new Set<string>();
  let offset = 1;
  for (let i = 0; i < parts.length; offset += parts[i]!.length + 1, i++) {
    const part = parts[i]!;
    if (part === '') return fail(offset, 1, "empty path segment ('//')", 'remove the extra /');
    const sigil = part[0];
    if (sigil === ':' || sigil === '*') {
      const name = part.slice(1);
      const kind = sigil === ':' ? 'parameter' : 'wildcard';
      if (!NAME.test(name)) {
        return fail(offset, part.length, `'${part}' is not a valid ${kind}`, `write '${sigil}name' with letters, digits and _ (not starting with a digit)`);
      }
      if (sigil === '*' && i !== parts.length - 1) return fail(offset, part.length, `the wildcard '${part}' must be the last segment`);
      if (names.has(name)) return fail(offset, part.length, `duplicate path parameter '${name}'`, 'give each parameter its own name');
      names.add(name);
      segments.push({ kind: sigil === ':' ? 'param' : 'wildcard', value: name });
      continue;
    }
    const braced = /^\{([^{}]*)\}$/.exec(part);
    if (braced) return fail(offset, part.length, `'${part}' is not a path parameter`, `write ':${braced[1]}'`);
    if (part === '.' || part === '..') {
      return fail(offset, part.length, `'${part}' segments never match: clients normalise them away`);
    }
    if (!STATIC.test(part)) {
      const bad = firstBadChar(part);
      return fail(offset + bad, 1, `character '${part[bad]}' is not allowed in a route path`, 'use letters, digits and . _ ~ -, or percent-encode (%XX)');
    }
    segments.push({ kind: 'static', value: part });
  }
  return { segments, problem: null };
}

function firstBadChar(part: string): number {
  for (let i = 0; i < part.length; i++) {
    if (part[i] === '%' && /^%[0-9A-Fa-f]{2}/.test(part.slice(i))) {
      i += 2;
      continue;
    }
    if (!STATIC_CHAR.test(part[i]!)) return i;
  }
  return 0;
}
