/**
 * `rvm db diff [DIR]` and `rvm db apply [DIR] [--allow-destructive]`: the schema plan of an
 * app's records against its database (the one `rvm run` would use), and applying it. Start-up
 * applies additive changes by itself; these are for the changes it withholds. `diff` writes
 * nothing: an app whose SQLite file does not exist yet is planned against an empty schema, and
 * the file is not made.
 */
import { existsSync } from 'node:fs';
import { databaseTarget } from '../../stdlib/records/database.js';
import { schemaAccess } from '../../stdlib/records/provider.js';
import { SqliteStore } from '../../stdlib/records/sqlite.js';
import type { SchemaChange, SchemaPlan } from '../../stdlib/records/store.js';
import { buildApp } from '../host.js';
import { CliError, EXIT_FAILURE, EXIT_OK, UsageError, errorsOf, formatDiagnostics, out, requireDir, type CliIo, type ParsedArgs } from './common.js';

/** A withheld change: where the type is, what changed, and the SQL that makes it (or, when no SQL can, what to do). */
function formatChange(c: SchemaChange): string {
  if (c.remedy !== undefined) return `  ${c.file}:${c.line}:${c.col} ${c.table}: ${c.description} (not applied by --allow-destructive either: ${c.remedy})`;
  const kind = c.destructive ? 'destructive' : 'needs a decision';
  return [`  ${c.file}:${c.line}:${c.col} ${c.table}: ${c.description} (${kind})`, ...c.sql.map((sql) => `    ${sql};`)].join('\n');
}

/** The plan as `rvm db` prints it; `applied` heads the list of changes made (or that would be). */
export function formatPlan(database: string, plan: SchemaPlan, applied: string): string {
  const lines = [`database: ${database}`];
  lines.push(plan.applied.length === 0 ? `${applied}: nothing` : `${applied}:`);
  for (const step of plan.applied) lines.push(`  ${step}`);
  if (plan.withheld.length > 0) {
    lines.push('withheld (rvm db apply --allow-destructive applies them):');
    for (const c of plan.withheld) lines.push(formatChange(c));
  }
  return lines.join('\n');
}

/** Runs `rvm db`. Exit 1 when the app does not build, or when `apply` withheld a change. */
export async function dbCommand(args: ParsedArgs, io: CliIo): Promise<number> {
  const action = args.positionals[0];
  if (action !== 'diff' && action !== 'apply') throw new UsageError(`rvm db: unknown action '${action ?? ''}' (diff or apply)`);
  const allowDestructive = args.flags.has('allow-destructive');
  if (action === 'diff' && allowDestructive) throw new UsageError('rvm db diff changes nothing: --allow-destructive goes with apply');
  const dir = requireDir(args.positionals[1] ?? '.');
  const build = await buildApp(dir, { cache: false, settings: { env: io.env } });
  const errors = errorsOf(build.diagnostics);
  if (errors.length > 0) throw new CliError(`the app does not build:\n${formatDiagnostics(errors)}`);
  const provider = build.registry.records?.provider;
  const schema = provider === undefined ? null : schemaAccess(provider);
  if (schema === null || schema.tables().length === 0) {
    out(io, 'no record types: the app uses no database');
    return EXIT_OK;
  }
  const target = databaseTarget(build.settings);
  if (action === 'diff' && target.kind === 'sqlite' && !existsSync(target.path)) {
    // Opening the file would create it: plan against an empty in-memory database instead.
    const empty = new SqliteStore(':memory:');
    let plan: SchemaPlan;
    try {
      plan = await empty.diff(schema.tables());
    } finally {
      await empty.close();
    }
    out(io, formatPlan(`${schema.database} (no database yet: every table would be created)`, plan, 'would apply'));
    return EXIT_OK;
  }
  const store = schema.acquire();
  let plan: SchemaPlan;
  try {
    plan = action === 'diff' ? await store.diff(schema.tables()) : await store.sync(schema.tables(), { allowDestructive });
  } finally {
    await schema.release();
  }
  out(io, formatPlan(schema.database, plan, action === 'diff' ? 'would apply' : 'applied'));
  return action === 'apply' && plan.withheld.length > 0 ? EXIT_FAILURE : EXIT_OK;
}
