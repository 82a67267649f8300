/** `rvm validators [DIR]`: every validator of the runtime's and standard plugins (and of DIR's plugins) with its signature. */
import type { PluginRegistry, RegisteredValidator } from '../../vm/host/registry.js';
import type { ParamSpec } from '../../plugins/sdk.js';
import { hostPlugins } from '../host.js';
import { loadSettings } from '../../vm/runtime/config.js';
import { EXIT_OK, out, plural, requireDir, type CliIo, type ParsedArgs } from './common.js';

/** How many field types there are: a validator listing all of them applies to any field. */
const FIELD_TYPE_COUNT = 9;

/** The field types, shortened when they are all (or all but `file`). */
function typesText(types: readonly string[]): string {
  if (types.length === FIELD_TYPE_COUNT) return 'any type';
  if (types.length === FIELD_TYPE_COUNT - 1 && !types.includes('file')) return 'any type but file';
  return types.join(', ');
}

/** `name?: type...` of one parameter, as `rvm validators` and `rvm natives` print it. */
export function paramText(p: ParamSpec): string {
  return `${p.name}${p.optional ? '?' : ''}: ${p.type ?? 'any'}${p.rest ? '...' : ''}`;
}

/** `@range(min: number, max: number)`, or `@email` without arguments. */
function signature(v: RegisteredValidator): string {
  const params = v.spec.params;
  return `@${v.name}${params.length > 0 ? `(${params.map(paramText).join(', ')})` : ''}`;
}

/**
 * The listing: per validator (aliases folded into the validator they spell), a line with its
 * signature, aliases, field types and plugin, then its description indented; a count at the end.
 */
export function validatorListing(registry: PluginRegistry): string {
  const validators = [...registry.validators.values()].filter((v) => v.aliasOf === undefined);
  const aliases = new Map<string, string[]>();
  for (const v of registry.validators.values()) {
    if (v.aliasOf !== undefined) aliases.set(v.aliasOf, [...(aliases.get(v.aliasOf) ?? []), `@${v.name}`]);
  }
  const heads = validators.map((v) => {
    const also = aliases.get(v.name);
    return `${signature(v)}${also ? ` (alias ${also.join(', ')})` : ''}`;
  });
  const typeTexts = validators.map((v) => typesText(v.spec.types));
  const headWidth = Math.max(0, ...heads.map((h) => h.length)) + 2;
  const typeWidth = Math.max(0, ...typeTexts.map((t) => t.length)) + 2;
  const blocks = validators.map((v, i) => `${heads[i]!.padEnd(headWidth)}${typeTexts[i]!.padEnd(typeWidth)}[${v.plugin}]\n    ${v.spec.doc}`);
  return `${blocks.join('\n')}\n\n${plural(validators.length, 'validator')}`;
}

/** The registry of the standard plugins, plus the plugins DIR's rvm.config.json lists when a DIR is given. */
export async function pluginRegistry(dir: string | undefined): Promise<PluginRegistry> {
  if (dir === undefined) return hostPlugins(null);
  return hostPlugins(dir, loadSettings(requireDir(dir)));
}

/** Runs `rvm validators`. */
export async function validatorsCommand(args: ParsedArgs, io: CliIo): Promise<number> {
  out(io, validatorListing(await pluginRegistry(args.positionals[0])));
  return EXIT_OK;
}
