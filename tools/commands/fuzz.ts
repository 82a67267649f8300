/** `rvm fuzz DIR [--runs N] [--seed S] [--header 'Name: value']`: property-based requests for every validated route. */
import { fuzzApp, MAX_RUNS } from '../fuzz.js';
import { CliError, EXIT_FAILURE, EXIT_OK, UsageError, flagValue, out, requireDir, type CliIo, type ParsedArgs } from './common.js';
import { findRouteFiles } from '../../vm/runtime/app-files.js';

/** A whole number in [min, max] from a flag, or a UsageError naming the flag. */
function wholeNumber(args: ParsedArgs, name: string, min: number, max: number): number | undefined {
  const text = flagValue(args, name);
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^-?\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`--${name} needs a whole number from ${min} to ${max}, got '${text}'`);
  }
  return n;
}

/** `Name: value` from --header, or a UsageError. */
function header(args: ParsedArgs): Record<string, string> {
  const text = flagValue(args, 'header');
  if (text === undefined) return {};
  const colon = text.indexOf(':');
  const name = colon < 0 ? '' : text.slice(0, colon).trim();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new UsageError(`--header needs 'Name: value', got '${text}'`);
  return { [name.toLowerCase()]: text.slice(colon + 1).trim() };
}

/** Runs `rvm fuzz`. The report goes to stdout; exit 1 when there is a finding or the app does not compile. */
export async function fuzzCommand(args: ParsedArgs, io: CliIo): Promise<number> {
  const runs = wholeNumber(args, 'runs', 1, MAX_RUNS);
  const seed = wholeNumber(args, 'seed', -(2 ** 31), 2 ** 32 - 1);
  const headers = header(args);
  const dir = requireDir(args.positionals[0] ?? '.');
  if (findRouteFiles(dir).files.length === 0) throw new CliError(`no .rvm route files in ${dir}`);
  const report = await fuzzApp(dir, { runs, seed, headers, env: io.env, log: (line) => out(io, line) });
  return report.exitCode === 0 ? EXIT_OK : EXIT_FAILURE;
}
