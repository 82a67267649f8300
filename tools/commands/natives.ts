/** `rvm natives [DIR]`: every native of the standard plugins (and of DIR's plugins) with its signature and doc. */
import type { PluginRegistry, RegisteredNative } from '../../vm/host/registry.js';
import { EXIT_OK, out, plural, type CliIo, type ParsedArgs } from './common.js';
import { paramText, pluginRegistry } from './validators.js';

/** Widest the signature column grows before longer signatures simply run into the plugin name. */
const MAX_SIGNATURE_COLUMN = 64;

/** `name(a: text, b?: int) -> text`, and `(middleware only)` for natives scoped to middleware. */
export function nativeSignature(n: RegisteredNative): string {
  const returns = n.meta.returns === undefined ? '' : ` -> ${n.meta.returns}`;
  const scope = n.meta.scope === 'middleware' ? ' (middleware only)' : '';
  return `${n.name}(${n.meta.params.map(paramText).join(', ')})${returns}${scope}`;
}

/** Every native, sorted by name. */
export function nativesOf(registry: PluginRegistry): RegisteredNative[] {
  return [...registry.natives.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The listing: per native a line with its signature and plugin, then its doc indented; the count at the end. */
export function nativeListing(registry: PluginRegistry): string {
  const natives = nativesOf(registry);
  const heads = natives.map(nativeSignature);
  // A few long signatures (rest parameters) would push every other line far right.
  const width = Math.min(MAX_SIGNATURE_COLUMN, Math.max(0, ...heads.map((h) => h.length)) + 2);
  const blocks = natives.map((n, i) => `${heads[i]!.padEnd(width)}[${n.plugin}]\n    ${n.meta.doc}`);
  return `${blocks.join('\n')}\n\n${plural(natives.length, 'native')}`;
}

/** Runs `rvm natives`. */
export async function nativesCommand(args: ParsedArgs, io: CliIo): Promise<number> {
  out(io, nativeListing(await pluginRegistry(args.positionals[0])));
  return EXIT_OK;
}
