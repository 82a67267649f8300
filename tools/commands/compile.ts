/** `rvm compile DIR -o FILE.rvmb`: compile and link the app, then write one deploy bundle recording its plugins. */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { recordPlugins } from '../../vm/host/loader.js';
import { writeBundle } from '../../vm/bytecode/bundle.js';
import { DiagnosticError } from '../../vm/diagnostics.js';
import { CONFIG_FILE } from '../../vm/runtime/config.js';
import { findRouteFiles } from '../../vm/runtime/app-files.js';
import { buildApp } from '../host.js';
import { COMPILER_VERSION } from '../../vm/lang.js';
import { CliError, EXIT_OK, UsageError, err, errorsOf, flagValue, formatDiagnostics, out, plural, requireDir, type CliIo, type ParsedArgs } from './common.js';

/** Runs `rvm compile`. */
export async function compileCommand(args: ParsedArgs, io: CliIo): Promise<number> {
  const dir = requireDir(args.positionals[0]!);
  const output = flagValue(args, 'output');
  if (output === undefined) throw new UsageError(`'rvm compile' needs -o FILE.rvmb (where to write the bundle)`);
  if (existsSync(output) && statSync(output).isDirectory()) throw new CliError(`-o ${output} is a folder; give a file name like app.rvmb`);
  if (findRouteFiles(dir).files.length === 0) throw new CliError(`no .rvm route files in ${dir}`);
  // A deploy build compiles from the sources, never from the cache.
  const build = await buildApp(dir, { cache: false, settings: { env: io.env } });
  const errors = errorsOf(build.diagnostics);
  if (errors.length > 0) throw new DiagnosticError(build.diagnostics);
  if (build.diagnostics.length > 0) err(io, `${formatDiagnostics(build.diagnostics)}\n`);
  const config = existsSync(join(dir, CONFIG_FILE)) ? { ...build.settings.config } : null;
  // The same specs buildApp loaded: the bundle records where the server finds each one again.
  const specs = Array.isArray(config?.plugins) ? config.plugins.map(String) : [];
  const plugins = await recordPlugins(specs, dir, output);
  writeBundle(output, { modules: build.modules, config, plugins }, COMPILER_VERSION);
  const routes = build.modules.reduce((n, m) => n + m.routes.length, 0);
  const kib = (statSync(output).size / 1024).toFixed(1);
  out(io, `wrote ${output} (${plural(build.modules.length, 'module')}, ${plural(routes, 'route')}, ${kib} KiB)`);
  return EXIT_OK;
}
