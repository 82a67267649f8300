/**
 * A Node module resolve hook (registered with node:module `register` before plugins load): an
 * `import` of `rvm-runtime` or `rvm-runtime/<subpath>` from any module resolves to the files of
 * the runtime running now, through its own package.json `exports`, whatever the importing app
 * installed (or did not). So a plugin's `RvmError`, `HALT` and helpers are the runtime's own.
 */

/** The runtime's npm package name; a test keeps it equal to package.json's. */
export const RUNTIME_PACKAGE = 'rvm-runtime';

/** What Node passes a resolve hook and what it answers (node:module customization hooks). */
interface ResolveContext {
  parentURL?: string | undefined;
  conditions: string[];
  importAttributes: Record<string, string>;
}
interface ResolveResult {
  url: string;
  format?: string | null | undefined;
  shortCircuit?: boolean | undefined;
}
type NextResolve = (specifier: string, context?: Partial<ResolveContext>) => ResolveResult | Promise<ResolveResult>;

/** Resolves the runtime's package name as this package resolves its own name; anything else as Node would. */
export function resolve(specifier: string, context: ResolveContext, nextResolve: NextResolve): ResolveResult | Promise<ResolveResult> {
  if (specifier !== RUNTIME_PACKAGE && !specifier.startsWith(`${RUNTIME_PACKAGE}/`)) return nextResolve(specifier, context);
  // Resolved from this file, which lies inside the runtime's package: Node's self-reference
  // rule maps the name through the package's own `exports`, so only exported files are reachable.
  return nextResolve(specifier, { ...context, parentURL: import.meta.url });
}
