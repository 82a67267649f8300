/**
 * `rvm` command lines for tests: run in the test's own process through `main` (tools/main.ts),
 * which costs no Node start-up nor module loading per command, or through the real binary for the
 * few smoke tests that check what only a process shows (its exit code, its working directory).
 * Both answer the same result, with RVM_DEBUG off so that errors read as a user sees them.
 */
import { spawnSync } from 'node:child_process';
import { main } from '../../tools/main.js';
import { RVM_CLI } from './rvm-cluster.js';

/** What a command line printed and its exit code. */
export interface RvmResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** How long a spawned command may run. */
const SPAWNED_TIMEOUT_MS = 60_000;

/** Runs `rvm ...argv` in this process with `env` over this process's environment. */
export async function rvm(argv: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<RvmResult> {
  let stdout = '';
  let stderr = '';
  const status = await main(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: { ...process.env, RVM_DEBUG: '', ...env },
  });
  // A server would keep serving inside the test process, with nothing to stop it.
  if (status === null) throw new Error(`rvm ${argv.join(' ')} kept serving: start servers with startRvmServer (rvm-cluster.ts)`);
  return { status, stdout, stderr };
}

/** Runs `rvm ...argv` as its own process (the binary), in `cwd`, with `env` over this process's environment. */
export function rvmProcess(argv: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): RvmResult {
  const r = spawnSync(process.execPath, [RVM_CLI, ...argv], {
    cwd: options.cwd,
    encoding: 'utf8',
    env: { ...process.env, RVM_DEBUG: '', ...options.env },
    timeout: SPAWNED_TIMEOUT_MS,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
