/** `rvm routes DIR`: a table of every route with its guards and source location, then one of the record types and their fields. */
import { HTTP_METHODS, type Literal } from '../../vm/lang.js';
import { DiagnosticError } from '../../vm/diagnostics.js';
import type { CompiledModule, FieldMeta, GuardUseMeta } from '../../vm/bytecode/module.js';
import { buildApp } from '../host.js';
import { EXIT_OK, errorsOf, out, plural, requireDir, type CliIo, type ParsedArgs } from './common.js';

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

/** The record decorators `rvm routes` marks a field with, in this order. */
export const RECORD_MARKS: readonly string[] = ['hidden', 'unique', 'index'];

function marksOf(field: FieldMeta): string {
  const marks = RECORD_MARKS.filter((mark) => field.decorators.some((d) => d.name === mark));
  return marks.length > 0 ? marks.join(', ') : '-';
}

/**
 * The rows of the types table: one per field, the type's name and source on its first field's
 * row; types sorted by name, fields in declaration order (`name?` when optional). The first row
 * is the heading; no types, no rows at all.
 */
export function typeRows(modules: readonly CompiledModule[]): string[][] {
  const types = modules.flatMap((m) => m.types.map((t) => ({ t, file: m.file })));
  if (types.length === 0) return [];
  types.sort((a, b) => (a.t.name < b.t.name ? -1 : a.t.name > b.t.name ? 1 : 0));
  const rows: string[][] = [['TYPE', 'FIELD', 'KIND', 'MARKS', 'SOURCE']];
  for (const { t, file } of types) {
    if (t.fields.length === 0) rows.push([t.name, '-', '-', '-', `${file}:${t.line}`]);
    t.fields.forEach((f, i) => rows.push([i === 0 ? t.name : '', `${f.name}${f.optional ? '?' : ''}`, f.type, marksOf(f), i === 0 ? `${file}:${t.line}` : '']));
  }
  return rows;
}

/** Aligns rows into columns two spaces apart, with no trailing blanks. */
export function formatTable(rows: readonly string[][]): string {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  return rows
    .map((row) =>
      row
        .map((c, col) => (col === row.length - 1 ? c : c.padEnd(widths[col]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** Runs `rvm routes`. */
export async function routesCommand(args: ParsedArgs, io: CliIo): Promise<number> {
  const dir = requireDir(args.positionals[0] ?? '.');
  const build = await buildApp(dir, { settings: { env: io.env } });
  const errors = errorsOf(build.diagnostics);
  if (errors.length > 0) throw new DiagnosticError(errors);
  const rows = routeRows(build.modules);
  const count = rows.length - 1;
  const types = typeRows(build.modules);
  const typeCount = build.modules.reduce((n, m) => n + m.types.length, 0);
  const parts = [count === 0 ? `no routes in ${dir}` : formatTable(rows)];
  if (types.length > 0) parts.push(formatTable(types));
  if (count > 0) parts.push(`${plural(count, 'route')}${typeCount > 0 ? ` and ${plural(typeCount, 'type')}` : ''} in ${plural(build.modules.length, 'file')}`);
  out(io, parts.join('\n\n'));
  return EXIT_OK;
}
