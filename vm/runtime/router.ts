/**
 * The route table: a segment trie behind the two-method `Router<T>` interface.
 *
 * Priority at every level is static segment, then `:param`, then a final `*wildcard`, with
 * backtracking, so `/users/me` and `/users/:id` coexist. Routes made only of static segments are
 * also kept in one Map keyed by path, answered without walking the trie (the common case).
 */
import type { PathSegment } from '../lang.js';
import type { RouteMatch, Router } from './types.js';

/** The method that matches every method. */
const ANY = 'ANY';

/** A route's value and the names its `:param`/`*wildcard` segments bind, in path order. */
interface Entry<T> {
  value: T;
  names: string[];
  /** The route as written, for duplicate messages. */
  path: string;
}

class TrieNode<T> {
  statics: Map<string, TrieNode<T>> | null = null;
  param: TrieNode<T> | null = null;
  /** Routes ending in `*name` below this node (the wildcard eats one or more segments). */
  wildcard: Map<string, Entry<T>> | null = null;
  /** Routes ending exactly at this node, by method. */
  routes: Map<string, Entry<T>> | null = null;
}

/** A found match for a static route, built once at `add` and returned as is on every request. */
type Found<T> = Extract<RouteMatch<T>, { kind: 'found' }>;

const NOT_FOUND: RouteMatch<never> = Object.freeze({ kind: 'not_found' });
const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** Creates an empty router. */
export function createRouter<T>(): Router<T> {
  return new TrieRouter<T>();
}

/** Renders segments back to the written path: `/users/:id`, `/files/*rest`. */
export function pathOf(segments: readonly PathSegment[]): string {
  if (segments.length === 0) return '/';
  let out = '';
  for (const s of segments) out += '/' + (s.kind === 'param' ? ':' : s.kind === 'wildcard' ? '*' : '') + s.value;
  return out;
}

class TrieRouter<T> implements Router<T> {
  private readonly root = new TrieNode<T>();
  /** Static routes by normalised path, then method. */
  private readonly statics = new Map<string, Map<string, Found<T>>>();

  add(method: string, segments: PathSegment[], value: T): void {
    method = method.toUpperCase();
    const path = pathOf(segments);
    const names: string[] = [];
    let node = this.root;
    for (let i = 0; i < segments.length; i++) {
      const seg = segments[i];
      if (seg.kind === 'static') {
        node.statics ??= new Map();
        let child = node.statics.get(seg.value);
        if (child === undefined) node.statics.set(seg.value, (child = new TrieNode<T>()));
        node = child;
      } else if (seg.kind === 'param') {
        names.push(seg.value);
        node = node.param ??= new TrieNode<T>();
      } else {
        if (i !== segments.length - 1) throw new Error(`route ${method} ${path}: a wildcard must be the last segment`);
        names.push(seg.value);
        node.wildcard ??= new Map();
        insert(node.wildcard, method, { value, names, path });
        return;
      }
    }
    node.routes ??= new Map();
    insert(node.routes, method, { value, names, path });
    if (names.length === 0) {
      let byMethod = this.statics.get(path);
      if (byMethod === undefined) this.statics.set(path, (byMethod = new Map()));
      byMethod.set(method, { kind: 'found', value, params: NO_PARAMS });
    }
  }

  match(method: string, path: string): RouteMatch<T> {
    // Lenient on requests: `/users/` is `/users`.
    if (path.length > 1 && path.charCodeAt(path.length - 1) === 47) path = path.slice(0, -1);
    const byMethod = this.statics.get(path);
    if (byMethod !== undefined) {
      const found = byMethod.get(method) ?? (method === 'HEAD' ? byMethod.get('GET') : undefined) ?? byMethod.get(ANY);
      if (found !== undefined) return found;
    }
    // The path is walked in place: segment boundaries are positions (past the end: no segment
    // left, so `/` starts there), and only a param's value is sliced out.
    const start = path === '/' ? 2 : 1;
    const entry = search(this.root, path, start, method, 0);
    if (entry !== null) return found(entry, path);
    const allowed = new Set<string>();
    collectAllowed(this.root, path, start, allowed);
    if (allowed.size === 0) return NOT_FOUND;
    if (allowed.has('GET')) allowed.add('HEAD');
    return { kind: 'method_not_allowed', allowed: [...allowed].sort() };
  }
}

/**
 * Start and end of each param or wildcard value of the match being searched, in path order:
 * a search at depth `n` writes at `n`, so a backtracked branch is simply overwritten. Reused, as
 * matching is synchronous.
 */
const MARKS: number[] = [];

/** Two routes of one method and path shape; `existing` is the one added first. */
export class DuplicateRouteError<T> extends Error {
  constructor(
    message: string,
    readonly existing: T,
  ) {
    super(message);
    this.name = 'DuplicateRouteError';
  }
}

function insert<T>(routes: Map<string, Entry<T>>, method: string, entry: Entry<T>): void {
  const existing = routes.get(method);
  if (existing !== undefined) {
    throw new DuplicateRouteError(`duplicate route: ${method} ${entry.path} has the same shape as ${method} ${existing.path}`, existing.value);
  }
  routes.set(method, entry);
}

/** The entry for `method` in a node's table: the method itself, GET for HEAD, then ANY. */
function pick<T>(routes: Map<string, Entry<T>> | null, method: string): Entry<T> | undefined {
  if (routes === null) return undefined;
  return routes.get(method) ?? (method === 'HEAD' ? routes.get('GET') : undefined) ?? routes.get(ANY);
}

/**
 * Depth-first search in priority order from the segment starting at `pos` (past the end: no
 * segment left); MARKS from index `n` on receive the bounds of the values bound below.
 */
function search<T>(node: TrieNode<T>, path: string, pos: number, method: string, n: number): Entry<T> | null {
  if (pos > path.length) return pick(node.routes, method) ?? null;
  let end = path.indexOf('/', pos);
  if (end === -1) end = path.length;
  if (node.statics !== null) {
    const child = node.statics.get(path.slice(pos, end));
    if (child !== undefined) {
      const hit = search(child, path, end + 1, method, n);
      if (hit !== null) return hit;
    }
  }
  if (node.param !== null && end > pos) {
    MARKS[n] = pos;
    MARKS[n + 1] = end;
    const hit = search(node.param, path, end + 1, method, n + 2);
    if (hit !== null) return hit;
  }
  const rest = pick(node.wildcard, method);
  if (rest !== undefined) {
    MARKS[n] = pos;
    MARKS[n + 1] = path.length;
    return rest;
  }
  return null;
}

/** Every method routed at a path, whatever the method asked. */
function collectAllowed<T>(node: TrieNode<T>, path: string, pos: number, out: Set<string>): void {
  if (pos > path.length) {
    if (node.routes !== null) for (const m of node.routes.keys()) out.add(m);
    return;
  }
  if (node.wildcard !== null) for (const m of node.wildcard.keys()) out.add(m);
  let end = path.indexOf('/', pos);
  if (end === -1) end = path.length;
  const child = node.statics?.get(path.slice(pos, end));
  if (child !== undefined) collectAllowed(child, path, end + 1, out);
  if (node.param !== null && end > pos) collectAllowed(node.param, path, end + 1, out);
}

function found<T>(entry: Entry<T>, path: string): RouteMatch<T> {
  const params: Record<string, string> = {};
  for (let i = 0; i < entry.names.length; i++) {
    const raw = path.slice(MARKS[2 * i], MARKS[2 * i + 1]);
    let decoded = raw;
    if (raw.indexOf('%') !== -1) {
      try {
        decoded = decodeURIComponent(raw);
      } catch {
        // A malformed escape cannot name any resource.
        return NOT_FOUND;
      }
    }
    const name = entry.names[i];
    // A param named `__proto__` must stay data, never set the prototype.
    if (name === '__proto__') Object.defineProperty(params, name, { value: decoded, writable: true, enumerable: true, configurable: true });
    else params[name] = decoded;
  }
  return { kind: 'found', value: entry.value, params };
}
