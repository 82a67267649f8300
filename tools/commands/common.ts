/**
 * What every `rvm` command shares: the command description type, hand-written argv parsing,
 * the two user-error classes and their exit codes, and output helpers.
 */
import { statSync } from 'node:fs';
import { formatDiagnostic, nearest, type Diagnostic } from '../../vm/diagnostics.js';
import { RUNTIME_MANIFEST } from '../../vm/lang.js';

/** Exit codes: success, a user-facing failure, a usage error, an rvm bug (sysexits EX_SOFTWARE). */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
export const EXIT_INTERNAL = 70;

/** A mistake in how rvm was invoked (unknown flag, missing value): one line, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A user-facing failure (missing folder, port in use): one line, exit 1. */
export class CliError extends Error {
  override name = 'CliError';
}

/** A flag a command accepts; without `value` it is a switch. */
export interface FlagSpec {
  name: string;
  short?: string;
  /** Placeholder of the flag's value in help (`PORT`); absent for switches. */
  value?: string;
  doc: string;
}

/** Parsed command line of one command. */
export interface ParsedArgs {
  positionals: string[];
  /** Flag name → value (switches map to true). The last occurrence wins. */
  flags: Map<string, string | true>;
  help: boolean;
}

/** A command: its help and argv shape; `run` returns the exit code, or null to keep running (a server). */
export interface CommandSpec {
  name: string;
  /** Positional part of the usage line: `[DIR|BUNDLE]`, `DIR`. */
  args: string;
  /** Bounds on the positional count. */
  minArgs: number;
  maxArgs: number;
  summary: string;
  /** Paragraph shown by `rvm help COMMAND` under the usage line. */
  description: string;
  flags: FlagSpec[];
  run(args: ParsedArgs, io: CliIo): Promise<number | null>;
}

/**
 * Where a command writes and the environment it reads: the process's own for the `rvm` binary,
 * buffers and a chosen environment when a test runs a command in its own process.
 */
export interface CliIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** The process's own stdout, stderr and environment. */
export const PROCESS_IO: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env };

/** `--help`/`-h` are accepted by every command. */
const HELP_FLAG: FlagSpec = { name: 'help', short: 'h', doc: 'show this help' };

/** Parses `argv` (after the command name) against the command's flags; throws UsageError. */
export function parseArgs(argv: readonly string[], spec: CommandSpec): ParsedArgs {
  const flags = new Map<string, string | true>();
  const positionals: string[] = [];
  const known = [...spec.flags, HELP_FLAG];
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const written = eq < 0 ? arg : arg.slice(0, eq);
    const flag = arg.startsWith('--') ? known.find((f) => `--${f.name}` === written) : known.find((f) => f.short !== undefined && `-${f.short}` === written);
    if (!flag) {
      const suggestion = nearest(
        written,
        known.map((f) => `--${f.name}`),
      );
      const hint = suggestion ? ` (did you mean '${suggestion}'?)` : ` (see 'rvm help ${spec.name}')`;
      throw new UsageError(`unknown flag '${written}' for 'rvm ${spec.name}'${hint}`);
    }
    if (flag === HELP_FLAG) {
      help = true;
      continue;
    }
    if (flag.value === undefined) {
      if (eq >= 0) throw new UsageError(`flag '${written}' takes no value`);
      flags.set(flag.name, true);
      continue;
    }
    let value: string | undefined = eq >= 0 ? arg.slice(eq + 1) : argv[i + 1];
    if (eq < 0) {
      if (value?.startsWith('-') && value !== '-') value = undefined;
      else i++;
    }
    if (value === undefined || value === '') throw new UsageError(`flag '${written}' needs a value (${flag.value})`);
    flags.set(flag.name, value);
  }
  if (!help) {
    if (positionals.length < spec.minArgs) throw new UsageError(`'rvm ${spec.name}' needs ${spec.args} (usage: rvm ${spec.name} ${spec.args})`);
    if (positionals.length > spec.maxArgs) throw new UsageError(`unexpected argument '${positionals[spec.maxArgs]}' for 'rvm ${spec.name}'`);
  }
  return { positionals, flags, help };
}

/** The value of a flag that takes one, if given. */
export function flagValue(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags.get(name);
  return typeof v === 'string' ? v : undefined;
}

/** Text as whole lines: a final newline added when missing. */
function lines(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

/** Writes lines to the command's stdout. */
export function out(io: CliIo, text: string): void {
  io.stdout.write(lines(text));
}

/** Writes lines to the command's stderr. */
export function err(io: CliIo, text: string): void {
  io.stderr.write(lines(text));
}

/** The rvm package version, read from package.json (without loading the runtime). */
export function rvmVersion(): string {
  return RUNTIME_MANIFEST.version;
}

/** The runtime's npm package name, read from package.json: what an app installs to get `rvm`. */
export function rvmPackageName(): string {
  return RUNTIME_MANIFEST.name;
}

/** "1 route", "2 routes". */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Checks that `dir` is an existing folder; throws CliError naming it otherwise. */
export function requireDir(dir: string): string {
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    throw new CliError(`no such folder: ${dir}`);
  }
  if (!isDir) throw new CliError(`not a folder: ${dir}`);
  return dir;
}

/** Diagnostics as a compiler prints them, separated by blank lines. */
export function formatDiagnostics(diagnostics: readonly Diagnostic[]): string {
  return diagnostics.map(formatDiagnostic).join('\n\n');
}

/** Errors among `diagnostics`. */
export function errorsOf(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return diagnostics.filter((d) => d.severity === 'error');
}
