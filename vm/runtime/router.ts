/**
 * The route table: a segment trie behind the two-method `Router<T>` interface.
 *
 * Priority at every level is static segment, then `:param`, then a final `*wildcard`, with
 * backtracking, so `/users/me` and `/users/:id` coexist. Routes made only of static segments are
 * also kept in one Map keyed by path, answered without walking the trie (the common case).
 */
import type { PathSegment } from '../ast.js';
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
    const parts = path === '/' ? [] : path.slice(1).split('/');
    const values: string[] = [];
    const entry = search(this.root, parts, 0, method, values);
    if (entry !== null) return found(entry, values);
    const allowed = new Set<string>();
    collectAllowed(this.root, parts, 0, allowed);
    if (allowed.size === 0) return NOT_FOUND;
    if (allowed.has('GET')) allowed.add('HEAD');
    return { kind: 'method_not_allowed', allowed: [...allowed].sort() };
  }
}

function insert<T>(routes: Map<string, Entry<T>>, method: string, entry: Entry<T>): void {
  const existing = routes.get(method);
  if (existing !== undefined) {
    throw new Error(`duplicate route: ${method} ${entry.path} has the same shape as ${method} ${existing.path}`);
  }
  routes.set(method, entry);
}

/** The entry for `method` in a node's table: the method itself, GET for HEAD, then ANY. */
function pick<T>(routes: Map<string, Entry<T>> | null, method: string): Entry<T> | undefined {
  if (routes === null) return undefined;
  return routes.get(method) ?? (method === 'HEAD' ? routes.get('GET') : undefined) ?? routes.get(ANY);
}

/** Depth-first search in priority order; `values` collects raw param values along the path. */
function search<T>(node: TrieNode<T>, parts: string[], i: number, method: string, values: string[]): Entry<T> | null {
  if (i === parts.length) return pick(node.routes, method) ?? null;
  const part = parts[i];
  if (node.statics !== null) {
    const child = node.statics.get(part);
    if (child !== undefined) {
      const hit = search(child, parts, i + 1, method, values);
      if (hit !== null) return hit;
    }
  }
  if (node.param !== null && part !== '') {
    values.push(part);
    const hit = search(node.param, parts, i + 1, method, values);
    if (hit !== null) return hit;
    values.pop();
  }
  const rest = pick(node.wildcard, method);
  if (rest !== undefined) {
    values.push(parts.slice(i).join('/'));
    return rest;
  }
  return null;
}

/** Every method routed at a path, whatever the method asked. */
function collectAllowed<T>(node: TrieNode<T>, parts: string[], i: number, out: Set<string>): void {
  if (node.wildcard !== null && i < parts.length) for (const m of node.wildcard.keys()) out.add(m);
  if (i === parts.length) {
    if (node.routes !== null) for (const m of node.routes.keys()) out.add(m);
    return;
  }
  const child = node.statics?.get(parts[i]);
  if (child !== undefined) collectAllowed(child, parts, i + 1, out);
  if (node.param !== null && parts[i] !== '') collectAllowed(node.param, parts, i + 1, out);
}

function found<T>(entry: Entry<T>, values: string[]): RouteMatch<T> {
  const params: Record<string, string> = {};
  for (let i = 0; i < entry.names.length; i++) {
    const raw = values[i];
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
