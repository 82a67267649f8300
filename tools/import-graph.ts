/**
 * The import graph of the source, and the layering rules it must keep (README's layout table): no
 * cycles among source files, and no edge a layer may not take. It reads the TypeScript source,
 * `import type` included: a cycle of types still ties two modules together, so none is allowed.
 * Dynamic `import()` is not an edge: it loads a module on first use, never at load time.
 */
import { readdirSync, readFileSync, type Dirent } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';

/** Files (repo-relative, `.ts`, forward slashes) and, for each, the files it imports. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

/** A layering rule: no file under `from` may import a file under `to` (unless `unless` allows it). */
export interface ForbiddenEdge {
  from: string;
  to: string;
  why: string;
  /** Targets under `to` that stay allowed (exact file paths). */
  unless?: (from: string, to: string) => boolean;
}

/** Folders of the graph: tests and benchmarks may import anything and are not part of it. */
const SOURCE_ROOTS = ['vm', 'plugins', 'stdlib', 'tools'];

/** Static `import … from` (`import type` too), `export … from` and side-effect `import '…'` with a relative specifier. */
const IMPORT = /(?:^|[;\n])\s*(?:import|export)\s*(?:[^'";]*?\sfrom\s*)?['"](\.{1,2}\/[^'"]+)['"]/g;

/** The graph of the source tree under `rootDir` (the repository). */
export function readImportGraph(rootDir: string): ImportGraph {
  const graph = new Map<string, string[]>();
  for (const root of SOURCE_ROOTS) {
    for (const file of sourceFiles(join(rootDir, root))) {
      const from = relative(rootDir, file).split(sep).join('/');
      const targets: string[] = [];
      for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
        // Sources import each other by their compiled names (`./x.js`).
        const target = posix.normalize(posix.join(posix.dirname(from), match[1]!)).replace(/\.js$/, '.ts');
        if (SOURCE_ROOTS.some((r) => target.startsWith(`${r}/`))) targets.push(target);
      }
      graph.set(from, [...new Set(targets)].sort());
    }
  }
  return graph;
}

function sourceFiles(dir: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'assets' || e.name === 'node_modules' ? [] : sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every cycle, as the files of one strongly connected component (Tarjan), sorted. */
export function findCycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    const selfLoop = (graph.get(node) ?? []).includes(node);
    if (component.length > 1 || selfLoop) cycles.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return cycles;
}

/** The layering of README's table: what each layer may not import. */
export const FORBIDDEN_EDGES: readonly ForbiddenEdge[] = [
  { from: 'vm/', to: 'plugins/', why: 'the VM owns the host contract (vm/host/); plugins/ is the SDK built on it' },
  { from: 'vm/interp/', to: 'vm/runtime/', why: 'the machine knows no HTTP' },
  { from: 'vm/interp/', to: 'vm/front/', why: 'the machine runs bytecode, not syntax' },
  { from: 'vm/runtime/', to: 'stdlib/', why: 'the composition root chooses the plugins, not the runtime' },
  { from: 'vm/front/', to: 'vm/interp/', why: 'the front end does not run code' },
  { from: 'vm/front/', to: 'vm/runtime/', why: 'the front end knows no HTTP' },
  { from: 'vm/compiler/', to: 'vm/runtime/', why: 'the compiler knows no HTTP' },
  { from: 'vm/bytecode/', to: 'vm/runtime/', why: 'the bytecode format knows no HTTP' },
  { from: 'plugins/', to: 'stdlib/', why: 'the SDK does not depend on the plugins written with it' },
  {
    from: 'stdlib/',
    to: '',
    why: 'a standard plugin uses only the SDK facade and its own folder',
    unless: (from, to) => to === 'plugins/sdk.ts' || sameFolder(from, to) || from === 'stdlib/index.ts',
  },
];

function sameFolder(from: string, to: string): boolean {
  const folder = (p: string) => p.split('/').slice(0, 2).join('/');
  return folder(from) === folder(to);
}

/** Every edge of the graph a rule forbids, as `from → to (why)`. */
export function forbiddenEdges(graph: ImportGraph, rules: readonly ForbiddenEdge[] = FORBIDDEN_EDGES): string[] {
  const found: string[] = [];
  for (const [from, targets] of graph) {
    for (const to of targets) {
      for (const rule of rules) {
        if (!from.startsWith(rule.from) || !to.startsWith(rule.to)) continue;
        if (rule.unless?.(from, to)) continue;
        found.push(`${from} → ${to} (${rule.why})`);
      }
    }
  }
  return found.sort();
}
