/**
 * One start-up measurement in a fresh process: `node dist/bench/startup-child.js DIR` loads the
 * app once and prints `{"loadMs": …}` as JSON on stdout.
 */
import { performance } from 'node:perf_hooks';
import { loadApp } from '../tools/host.js';
import { createLogger } from '../vm/runtime/log.js';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: startup-child.js APP_DIR');
  process.exit(2);
}
const started = performance.now();
const app = await loadApp(dir, { logger: createLogger({ quiet: true }) });
const loadMs = performance.now() - started;
await app.close();
console.log(JSON.stringify({ loadMs }));
process.exit(0);
