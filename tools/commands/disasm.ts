/** `rvm disasm FILE`: the bytecode listing of a `.rvm` source, a `.rvmc` artefact or a `.rvmb` bundle. */
import { readFileSync, statSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { decodeModule, sniffArtefact } from '../../vm/bytecode/artefact.js';
import { decodeBundle } from '../../vm/bytecode/bundle.js';
import { CACHE_DIR, CACHE_EXTENSION } from '../../vm/bytecode/cache.js';
import { compileSource, sourceHash } from '../../vm/compiler/compiler.js';
import { DiagnosticError } from '../../vm/diagnostics.js';
import type { CompiledModule } from '../../vm/bytecode/module.js';
import { COMPILER_VERSION } from '../../vm/lang.js';
import { disassembleModule } from '../disasm.js';
import { CliError, EXIT_OK, err, errorsOf, formatDiagnostics, out, type CliIo, type ParsedArgs } from './common.js';

/** The source of a cache artefact (`app/.rvm/cache/x.rvm.rvmc` → `app/x.rvm`) when it is still the one compiled. */
function sourceOfCached(file: string, m: CompiledModule): string | undefined {
  const path = resolve(file);
  const marker = `${sep}${CACHE_DIR}${sep}`;
  const at = path.lastIndexOf(marker);
  if (at < 0 || !path.endsWith(CACHE_EXTENSION)) return undefined;
  try {
    const source = readFileSync(join(path.slice(0, at), path.slice(at + marker.length, -CACHE_EXTENSION.length)), 'utf8');
    return sourceHash(source) === m.header.sourceHash ? source : undefined;
  } catch {
    return undefined;
  }
}

/** Runs `rvm disasm`. */
export async function disasmCommand(args: ParsedArgs, io: CliIo): Promise<number> {
  const file = args.positionals[0]!;
  let isFile: boolean;
  try {
    isFile = statSync(file).isFile();
  } catch {
    throw new CliError(`no such file: ${file}`);
  }
  if (!isFile) throw new CliError(`${file} is not a file; give a .rvm source, a .rvmc artefact or a .rvmb bundle`);
  if (file.endsWith('.rvm')) {
    const source = readFileSync(file, 'utf8');
    const result = compileSource(file, source, { compilerVersion: COMPILER_VERSION, pluginsFingerprint: '' });
    if (result.module === null || errorsOf(result.diagnostics).length > 0) throw new DiagnosticError(result.diagnostics);
    if (result.diagnostics.length > 0) err(io, `${formatDiagnostics(result.diagnostics)}\n`);
    out(io, disassembleModule(result.module, source));
    return EXIT_OK;
  }
  const bytes = readFileSync(file);
  if (sniffArtefact(bytes) === 'bundle') {
    const bundle = decodeBundle(bytes, file);
    out(io, `; bundle ${file}  (compiler ${bundle.compiler}, created ${bundle.createdAt}, ${bundle.modules.length} modules)\n\n`);
    out(io, bundle.modules.map((m) => disassembleModule(m)).join('\n'));
    return EXIT_OK;
  }
  const m = decodeModule(bytes, file);
  out(io, disassembleModule(m, sourceOfCached(file, m)));
  return EXIT_OK;
}
