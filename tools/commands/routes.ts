/** `rvm routes DIR`: a table of every route with its guards and source location. */
import { HTTP_METHODS, type Literal } from '../../vm/lang.js';
import { DiagnosticError } from '../../vm/diagnostics.js';
import type { CompiledModule, GuardUseMeta } from '../../vm/bytecode/module.js';
import { buildApp } from '../host.js';
import { EXIT_OK, errorsOf, out, plural, requireDir, type ParsedArgs } from './common.js';

function literal(v: Literal): string {
  return typeof v === 'string' ? `'${v}'` : String(v);
}

function guardText(g: GuardUseMeta): string {
  const args = g.args.length > 0 ? `(${g.args.map(literal).join(', ')})` : '';
  return `${g.name}${args}${g.mode === 'optional' ? ' (optional)' : ''}`;
}

/** The rows of the routes table, sorted by path then method; the first row is the heading. */
export function routeRows(modules: readonly CompiledModule[]): string[][] {
  const routes = modules.flatMap((m) => m.routes.map((r) => ({ r, file: m.file })));
  routes.sort((a, b) => (a.r.path < b.r.path ? -1 : a.r.path > b.r.path ? 1 : HTTP_METHODS.indexOf(a.r.method) - HTTP_METHODS.indexOf(b.r.method)));
  const rows = routes.map(({ r, file }) => [r.method, r.path, r.guards.length > 0 ? r.guards.map(guardText).join(', ') : '-', `${file}:${r.line}`]);
  return [['METHOD', 'PATH', 'GUARDS', 'SOURCE'], ...rows];
}

/** Aligns rows into columns two spaces apart, with no trailing blanks. */
export function formatTable(rows: readonly string[][]): string {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  return rows.map((row) => row.map((c, col) => (col === row.length - 1 ? c : c.padEnd(widths[col]!))).join('  ')).join('\n');
}

/** Runs `rvm routes`. */
export async function routesCommand(args: ParsedArgs): Promise<number> {
  const dir = requireDir(args.positionals[0] ?? '.');
  const build = await buildApp(dir);
  const errors = errorsOf(build.diagnostics);
  if (errors.length > 0) throw new DiagnosticError(errors);
  const rows = routeRows(build.modules);
  const count = rows.length - 1;
  out(count === 0 ? `no routes in ${dir}` : `${formatTable(rows)}\n\n${plural(count, 'route')} in ${plural(build.modules.length, 'file')}`);
  return EXIT_OK;
}
