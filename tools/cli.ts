#!/usr/bin/env node
/** The `rvm` binary: runs the command line (main.ts) and exits with its code once the output is written. */
import { main } from './main.js';

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
