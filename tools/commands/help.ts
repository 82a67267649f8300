/** `rvm help [COMMAND]`: the command list, or one command's usage and options. */
import { nearest } from '../../vm/diagnostics.js';
import { EXIT_OK, UsageError, out, rvmVersion, type CliIo, type CommandSpec, type FlagSpec } from './common.js';

/** Aligns `[left, right]` pairs into two columns under a two-space indent. */
function columns(pairs: readonly [string, string][]): string {
  const width = Math.max(...pairs.map(([left]) => left.length)) + 2;
  return pairs.map(([left, right]) => `  ${left.padEnd(width)}${right}`).join('\n');
}

function flagLabel(f: FlagSpec): string {
  const long = `--${f.name}${f.value ? ` ${f.value}` : ''}`;
  return f.short ? `-${f.short}, ${long}` : `    ${long}`;
}

/** The overview `rvm help` prints. */
export function generalHelp(commands: readonly CommandSpec[]): string {
  return [
    `rvm ${rvmVersion()}: route files compiled to bytecode, served over HTTP`,
    '',
    'Usage: rvm <command> [options]',
    '',
    'Commands:',
    columns(commands.map((c) => [`${c.name} ${c.args}`.trim(), c.summary])),
    '',
    'Options:',
    columns([
      ['-v, --version', 'print the version'],
      ['-h, --help', 'show help'],
    ]),
    '',
    "Run 'rvm help <command>' for the options of a command.",
  ].join('\n');
}

/** The usage, description and options of one command. */
export function commandHelp(c: CommandSpec): string {
  const flags: FlagSpec[] = [...c.flags, { name: 'help', short: 'h', doc: 'show this help' }];
  const usage = `Usage: rvm ${c.name}${c.args ? ` ${c.args}` : ''}${c.flags.length > 0 ? ' [options]' : ''}`;
  return [usage, '', c.description, '', 'Options:', columns(flags.map((f) => [flagLabel(f), f.doc]))].join('\n');
}

/** The "unknown command" usage error, with a suggestion when one is close. */
export function unknownCommand(name: string, commands: readonly CommandSpec[]): UsageError {
  const suggestion = nearest(
    name,
    commands.map((c) => c.name),
  );
  return new UsageError(`unknown command '${name}' ${suggestion ? `(did you mean '${suggestion}'?)` : "(see 'rvm help')"}`);
}

/** Runs `rvm help [COMMAND]`. */
export function helpCommand(commands: readonly CommandSpec[], io: CliIo, name?: string): number {
  if (name === undefined) {
    out(io, generalHelp(commands));
    return EXIT_OK;
  }
  const c = commands.find((x) => x.name === name);
  if (!c) throw unknownCommand(name, commands);
  out(io, commandHelp(c));
  return EXIT_OK;
}
