#!/usr/bin/env node
/**
 * The `rvm` command line. Hand-written argv parsing; every user error is one line on stderr
 * with its exit code (1 failure, 2 usage), diagnostics are printed the way compilers print
 * them, and only a bug in rvm itself says "internal error" (exit 70).
 */
import { DiagnosticError } from '../vm/diagnostics.js';
import { isUserFacingCode } from '../vm/errors.js';
import { COMMANDS } from './commands/index.js';
import { commandHelp, generalHelp, unknownCommand } from './commands/help.js';
import { CliError, EXIT_FAILURE, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, UsageError, err, formatDiagnostics, out, parseArgs, rvmVersion } from './commands/common.js';

/** File-system error codes that mean "fix your files or permissions", not "rvm is broken". */
const FS_ERRORS = new Set(['ENOENT', 'EACCES', 'EPERM', 'ENOTDIR', 'EISDIR', 'EROFS', 'ENOSPC', 'EMFILE']);

/** Runs one command line; resolves to the exit code, or null when a server keeps running. */
async function main(argv: readonly string[]): Promise<number | null> {
  try {
    const [first, ...rest] = argv;
    if (first === undefined) {
      out(generalHelp(COMMANDS));
      return EXIT_OK;
    }
    if (first === '--version' || first === '-v' || first === 'version') {
      out(`rvm ${rvmVersion()}`);
      return EXIT_OK;
    }
    if (first === '--help' || first === '-h') {
      out(generalHelp(COMMANDS));
      return EXIT_OK;
    }
    if (first.startsWith('-')) throw new UsageError(`unknown flag '${first}' (see 'rvm help')`);
    const spec = COMMANDS.find((c) => c.name === first);
    if (!spec) throw unknownCommand(first, COMMANDS);
    const args = parseArgs(rest, spec);
    if (args.help) {
      out(commandHelp(spec));
      return EXIT_OK;
    }
    return await spec.run(args);
  } catch (e) {
    return report(e);
  }
}

/** Prints an error the way its kind deserves and returns the exit code. */
function report(e: unknown): number {
  if (e instanceof UsageError) {
    err(`rvm: ${e.message}`);
    return EXIT_USAGE;
  }
  if (e instanceof CliError) {
    err(`rvm: ${e.message}`);
    return EXIT_FAILURE;
  }
  if (e instanceof DiagnosticError) {
    const errors = e.diagnostics.filter((d) => d.severity === 'error').length;
    err(`${formatDiagnostics(e.diagnostics)}\n\nrvm: ${errors === 1 ? '1 error' : `${errors} errors`}`);
    return EXIT_FAILURE;
  }
  const code = (e as { code?: unknown } | null)?.code;
  // An error whose code the catalogue files as a diagnostic, artefact or plugin code (E_CONFIG,
  // E_ARTEFACT_CORRUPT, ...) is addressed to the user, and so is a file-system refusal (a folder
  // rvm may not read): neither is a bug in rvm.
  if (e instanceof Error && typeof code === 'string' && (isUserFacingCode(code) || FS_ERRORS.has(code))) {
    err(`rvm: ${e.message.split('\n')[0]}`);
    return EXIT_FAILURE;
  }
  const message = e instanceof Error ? e.message : String(e);
  err(`rvm: internal error: ${message.split('\n')[0]}`);
  if (process.env.RVM_DEBUG && e instanceof Error && e.stack) err(e.stack);
  return EXIT_INTERNAL;
}

/** Exits once stdout and stderr have taken everything written (they may be pipes). */
function exitWhenFlushed(code: number): void {
  let pending = 2;
  const done = (): void => {
    if (--pending === 0) process.exit(code);
  };
  process.stdout.write('', done);
  process.stderr.write('', done);
}

const code = await main(process.argv.slice(2));
if (code !== null) exitWhenFlushed(code);
