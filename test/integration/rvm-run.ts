/**
 * Starts `rvm run DIR --prod --port PORT [ARGS…]` (port 0: any free port; ARGS such as
 * `--workers 4`) as a child process and waits for its start lines (test/support/rvm-cluster.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { RVM_START_TIMEOUT_MS, startRvmServer } from '../support/rvm-cluster.js';

export interface RunningCli {
  child: ChildProcess;
  /** `http://127.0.0.1:PORT`, without a trailing slash. */
  url: string;
  port: number;
  /** Everything it printed so far, stdout and stderr (the start lines, then the log). */
  output(): string;
  /** Resolves once the output matches `pattern` (a start line printed after the URL); rejects after RVM_START_TIMEOUT_MS. */
  waitFor(pattern: RegExp): Promise<void>;
}

/** One `rvm run --prod` with `env` as its environment; stopping it is the caller's (kill `child`). */
export async function startRvm(dir: string, env: NodeJS.ProcessEnv = process.env, port = 0, args: readonly string[] = []): Promise<RunningCli> {
  const server = await startRvmServer(dir, { env, port: port === 0 ? undefined : port, args });
  return {
    child: server.child,
    url: server.url,
    port: server.port,
    output: server.output,
    waitFor: async (pattern) => {
      await server.waitFor(pattern, RVM_START_TIMEOUT_MS);
    },
  };
}
