/** `rvm openapi DIR [-o FILE] [--version 3.0|3.1] [--yaml]`: the app's OpenAPI document, as the server serves it. */
import { writeFileSync } from 'node:fs';
import { DiagnosticError } from '../../vm/diagnostics.js';
import { buildApp } from '../host.js';
import { introspectBuild } from '../../vm/runtime/introspect-build.js';
import { buildOpenApi, type OpenApiVersion } from '../../stdlib/reference/openapi.js';
import { toYaml } from '../../stdlib/reference/yaml.js';
import { CliError, EXIT_OK, err, errorsOf, flagValue, out, requireDir, UsageError, type CliIo, type ParsedArgs } from './common.js';

/** `--version` values, as `?version=` accepts them. */
const VERSIONS: Readonly<Record<string, OpenApiVersion>> = { '3.1': '3.1', '3.1.0': '3.1', '3.0': '3.0', '3.0.3': '3.0' };

/** The OpenAPI text of the app in `dir` (JSON, or YAML) built with `env`; compile errors throw DiagnosticError. */
export async function openapiText(dir: string, options: { version: OpenApiVersion; yaml: boolean; env: CliIo['env'] }): Promise<string> {
  const build = await buildApp(dir, { settings: { env: options.env } });
  const errors = errorsOf(build.diagnostics);
  if (errors.length > 0 || build.linked === null) throw new DiagnosticError(errors);
  const doc = buildOpenApi(introspectBuild(build), { version: options.version });
  return options.yaml ? toYaml(doc) : `${JSON.stringify(doc, null, 2)}\n`;
}

/** Runs `rvm openapi`. */
export async function openapiCommand(args: ParsedArgs, io: CliIo): Promise<number> {
  const dir = requireDir(args.positionals[0] ?? '.');
  const written = flagValue(args, 'version') ?? '3.1';
  const version = VERSIONS[written];
  if (version === undefined) throw new UsageError(`--version must be 3.1 or 3.0, got '${written}'`);
  const file = flagValue(args, 'output');
  // An -o file named .yaml/.yml gets YAML without --yaml.
  const yaml = args.flags.get('yaml') === true || (file !== undefined && /\.ya?ml$/i.test(file));
  const text = await openapiText(dir, { version, yaml, env: io.env });
  if (file === undefined) {
    out(io, text);
    return EXIT_OK;
  }
  try {
    writeFileSync(file, text);
  } catch (e) {
    throw new CliError(`cannot write ${file}: ${(e as Error).message}`);
  }
  err(io, `wrote OpenAPI ${version} (${yaml ? 'YAML' : 'JSON'}) to ${file}`);
  return EXIT_OK;
}
