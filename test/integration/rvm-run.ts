/**
 * Starts `rvm run DIR --prod --port PORT [ARGS…]` (port 0: any free port; ARGS such as
 * `--workers 4`) as a child process and waits for the URL it prints.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../tools/cli.js', import.meta.url));
/** How long a server may take to print its URL before the test gives up (a cluster compiles, then starts every worker). */
const START_TIMEOUT_MS = 30_000;

export interface RunningCli {
  child: ChildProcess;
  /** `http://127.0.0.1:PORT`, without a trailing slash. */
  url: string;
  port: number;
  /** Everything it printed so far, stdout and stderr (the start lines, then the log). */
  output(): string;
  /** Resolves once the output matches `pattern` (a start line printed after the URL); rejects after START_TIMEOUT_MS. */
  waitFor(pattern: RegExp): Promise<void>;
}

export function startRvm(dir: string, env: NodeJS.ProcessEnv = process.env, port = 0, args: readonly string[] = []): Promise<RunningCli> {
  const child = spawn(process.execPath, [CLI, 'run', dir, '--prod', '--port', String(port), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise<RunningCli>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`rvm run did not print its URL:\n${output}`)), START_TIMEOUT_MS);
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = /App:\s+(http:\/\/[^\s:]+:(\d+))/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, port: Number(m[2]), output: () => output, waitFor: (pattern) => waitFor(() => output, pattern) });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`rvm run exited with ${code}:\n${output}`));
    });
  });
}

/** Polls `output` until it matches `pattern`, for at most START_TIMEOUT_MS. */
async function waitFor(output: () => string, pattern: RegExp): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!pattern.test(output())) {
    if (Date.now() > deadline) throw new Error(`rvm run did not print ${pattern}:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
