/** Starts `rvm run DIR --prod --port PORT` (0: any free port) as a child process and waits for its banner (test/support/rvm-cluster.ts). */
import type { ChildProcess } from 'node:child_process';
import { startRvmServer } from '../support/rvm-cluster.js';

export interface RunningCli {
  child: ChildProcess;
  /** `http://127.0.0.1:PORT`, without a trailing slash. */
  url: string;
  port: number;
}

/** One `rvm run --prod` with `env` as its environment; stopping it is the caller's (kill `child`). */
export async function startRvm(dir: string, env: NodeJS.ProcessEnv = process.env, port = 0): Promise<RunningCli> {
  const server = await startRvmServer(dir, { env, port: port === 0 ? undefined : port });
  return { child: server.child, url: server.url, port: server.port };
}
