/**
 * The `rvm` command line. Hand-written argv parsing; every user error is one line on stderr
 * with its exit code (1 failure, 2 usage), diagnostics are printed the way compilers print
 * them, and only a bug in rvm itself says "internal error" (exit 70). `main` runs one command
 * line in the calling process; tools/cli.ts is the `rvm` binary around it.
 */
import { DiagnosticError } from '../vm/diagnostics.js';
import { isUserFacingCode } from '../vm/errors.js';
import { COMMANDS } from './commands/index.js';
import { commandHelp, generalHelp, unknownCommand } from './commands/help.js';
import {
  CliError,
  EXIT_FAILURE,
  EXIT_INTERNAL,
  EXIT_OK,
  EXIT_USAGE,
  PROCESS_IO,
  UsageError,
  err,
  formatDiagnostics,
  out,
  parseArgs,
  rvmVersion,
  type CliIo,
} from './commands/common.js';

/** File-system error codes that mean "fix your files or permissions", not "rvm is broken". */
const FS_ERRORS = new Set(['ENOENT', 'EACCES', 'EPERM', 'ENOTDIR', 'EISDIR', 'EROFS', 'ENOSPC', 'EMFILE']);

/**
 * Runs one command line (the arguments after `rvm`), writing to `io`; resolves to the exit code,
 * or null when a server keeps running (`rvm run`, which then lives until a signal).
 */
export async function main(argv: readonly string[], io: CliIo = PROCESS_IO): Promise<number | null> {
  try {
    const [first, ...rest] = argv;
    if (first === undefined) {
      out(io, generalHelp(COMMANDS));
      return EXIT_OK;
    }
    if (first === '--version' || first === '-v' || first === 'version') {
      out(io, `rvm ${rvmVersion()}`);
      return EXIT_OK;
    }
    if (first === '--help' || first === '-h') {
      out(io, generalHelp(COMMANDS));
      return EXIT_OK;
    }
    if (first.startsWith('-')) throw new UsageError(`unknown flag '${first}' (see 'rvm help')`);
    const spec = COMMANDS.find((c) => c.name === first);
    if (!spec) throw unknownCommand(first, COMMANDS);
    const args = parseArgs(rest, spec);
    if (args.help) {
      out(io, commandHelp(spec));
      return EXIT_OK;
    }
    return await spec.run(args, io);
  } catch (e) {
    return report(e, io);
  }
}

/** Prints an error the way its kind deserves and returns the exit code. */
function report(e: unknown, io: CliIo): number {
  if (e instanceof UsageError) {
    err(io, `rvm: ${e.message}`);
    return EXIT_USAGE;
  }
  if (e instanceof CliError) {
    err(io, `rvm: ${e.message}`);
    return EXIT_FAILURE;
  }
  if (e instanceof DiagnosticError) {
    const errors = e.diagnostics.filter((d) => d.severity === 'error').length;
    err(io, `${formatDiagnostics(e.diagnostics)}\n\nrvm: ${errors === 1 ? '1 error' : `${errors} errors`}`);
    return EXIT_FAILURE;
  }
  const code = (e as { code?: unknown } | null)?.code;
  // An error whose code the catalogue files as a diagnostic, artefact or plugin code (E_CONFIG,
  // E_ARTEFACT_CORRUPT, ...) is addressed to the user, and so is a file-system refusal (a folder
  // rvm may not read): neither is a bug in rvm.
  if (e instanceof Error && typeof code === 'string' && (isUserFacingCode(code) || FS_ERRORS.has(code))) {
    err(io, `rvm: ${e.message.split('\n')[0]}`);
    return EXIT_FAILURE;
  }
  const message = e instanceof Error ? e.message : String(e);
  err(io, `rvm: internal error: ${message.split('\n')[0]}`);
  if (io.env.RVM_DEBUG && e instanceof Error && e.stack) err(io, e.stack);
  return EXIT_INTERNAL;
}
