/** `rvm check DIR`: compile and link the app (record calls and types included), print every diagnostic, exit 1 on any error. */
import { findRouteFiles } from '../../vm/runtime/app-files.js';
import { buildApp } from '../host.js';
import { CliError, EXIT_FAILURE, EXIT_OK, errorsOf, formatDiagnostics, out, plural, requireDir, type CliIo, type ParsedArgs } from './common.js';

/** Runs `rvm check`. Diagnostics and the summary go to stdout: they are what was asked for. */
export async function checkCommand(args: ParsedArgs, io: CliIo): Promise<number> {
  const dir = requireDir(args.positionals[0] ?? '.');
  const files = findRouteFiles(dir).files.length;
  if (files === 0) throw new CliError(`no .rvm route files in ${dir}`);
  // No cache: a cached module carries no diagnostics, and check must report warnings too.
  const build = await buildApp(dir, { cache: false, settings: { env: io.env } });
  const errors = errorsOf(build.diagnostics).length;
  const warnings = build.diagnostics.length - errors;
  if (build.diagnostics.length > 0) out(io, `${formatDiagnostics(build.diagnostics)}\n`);
  const routes = build.modules.reduce((n, m) => n + m.routes.length, 0);
  const types = build.modules.reduce((n, m) => n + m.types.length, 0);
  const problems = errors + warnings === 0 ? 'no problems' : `${plural(errors, 'error')}, ${plural(warnings, 'warning')}`;
  const counted = types > 0 ? `${plural(routes, 'route')}, ${plural(types, 'type')}` : plural(routes, 'route');
  out(io, `${errors > 0 ? 'failed' : 'ok'}: ${problems} in ${plural(files, 'file')} (${counted})`);
  return errors > 0 ? EXIT_FAILURE : EXIT_OK;
}
