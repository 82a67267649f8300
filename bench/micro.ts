/**
 * Micro benchmarks (tinybench): lex, parse and compile throughput in lines/s over the generated
 * corpus (bench/corpus.ts), loading modules from artefact bytes against compiling them, and VM
 * dispatch on a loop-heavy handler through inject, and lambdas: map, filter and comprehensions
 * against the equivalent `for` loops, and sort_by of 100,000 objects. Then the validation benchmark
 * (bench/validation.ts: rvm's engine against ajv) and the start-up benchmark
 * (bench/startup.ts): cold against warm cache, each in fresh processes.
 *
 * Env: BENCH_TIME (ms per task, default 1000), BENCH_FILES (corpus size, default 200).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bench } from 'tinybench';
import { tokenize } from '../vm/front/lexer.js';
import { parse } from '../vm/front/parser.js';
import { compileSource, type CompileOptions } from '../vm/compiler/compiler.js';
import { decodeModule, encodeModule } from '../vm/bytecode/artefact.js';
import type { CompiledModule } from '../vm/bytecode/module.js';
import { loadApp } from '../tools/host.js';
import { COMPILER_VERSION } from '../vm/lang.js';
import { inject } from '../vm/runtime/http/inject.js';
import { createLogger } from '../vm/runtime/log.js';
import { countLines, DEFAULT_FILE_COUNT, generateCorpus, type CorpusFile } from './corpus.js';
import { runStartupBench } from './startup.js';
import { runValidationBench } from './validation.js';
import { fmt, formatTable, machineDescription, positiveEnv } from './util.js';

/** Milliseconds of sampling per task: 1 s gives a relative margin of error of a few percent. */
const TASK_TIME_MS = positiveEnv('BENCH_TIME', 1000);
const FILE_COUNT = positiveEnv('BENCH_FILES', DEFAULT_FILE_COUNT);
/** The loop bound of the dispatch benchmark's handler: long enough that dispatch dominates inject. */
const LOOP_COUNT = 10_000;

const COMPILE_OPTIONS: CompileOptions = { compilerVersion: COMPILER_VERSION, pluginsFingerprint: 'bench' };

/** The dispatch benchmark's app: a loop-heavy route and an empty one to subtract inject's cost. */
const DISPATCH_APP = `route GET /sum {
  total = 0
  i = 1
  while i <= ${LOOP_COUNT} {
    total = total + i
    i = i + 1
  }
  response.ok({ total: total })
}

route GET /noop {
  response.ok({ total: 0 })
}
`;

/** Items the map/filter/comprehension routes walk. */
const LIST_COUNT = 10_000;
/** Objects sort_by orders: the issue's figure, inside the default CPU budget. */
const SORT_COUNT = 100_000;

/**
 * The lambda benchmark's app: each route builds the same list, then walks it one way; /build only
 * builds it, to subtract. Its `for` loops are the fair equivalents (no `+` copying the list).
 */
const LAMBDA_APP = `fn numbers(n) {
  xs = []
  i = 0
  while i < n {
    xs[i] = i
    i = i + 1
  }
  return xs
}

fn records(n) {
  xs = []
  i = 0
  while i < n {
    xs[i] = { id: i, score: (i * 7919) % 100003 }
    i = i + 1
  }
  return xs
}

route GET /build {
  response.ok(len(numbers(${LIST_COUNT})))
}

route GET /map/for {
  out = []
  for i, x in numbers(${LIST_COUNT}) {
    out[i] = x * 2
  }
  response.ok(len(out))
}

route GET /map/lambda {
  response.ok(len(map(numbers(${LIST_COUNT}), x => x * 2)))
}

route GET /map/comprehension {
  response.ok(len([x * 2 for x in numbers(${LIST_COUNT})]))
}

route GET /filter/for {
  out = []
  n = 0
  for x in numbers(${LIST_COUNT}) {
    if x % 3 == 0 {
      out[n] = x
      n = n + 1
    }
  }
  response.ok(len(out))
}

route GET /filter/lambda {
  response.ok(len(filter(numbers(${LIST_COUNT}), x => x % 3 == 0)))
}

route GET /filter/comprehension {
  response.ok(len([x for x in numbers(${LIST_COUNT}) if x % 3 == 0]))
}

route GET /sort/build {
  response.ok(len(records(${SORT_COUNT})))
}

route GET /sort/key {
  response.ok(sort_by(records(${SORT_COUNT}), 'score')[0].id)
}

route GET /sort/lambda {
  response.ok(sort_by(records(${SORT_COUNT}), r => r.score, true)[0].id)
}
`;

/** The lambda routes, by task name; the sort ones are answered a few times, not for a whole second. */
const LAMBDA_TASKS = [
  ['/build', 'build the list'],
  ['/map/for', 'map: for loop'],
  ['/map/lambda', 'map: map(xs, x => …)'],
  ['/map/comprehension', 'map: [… for x in xs]'],
  ['/filter/for', 'filter: for loop'],
  ['/filter/lambda', 'filter: filter(xs, x => …)'],
  ['/filter/comprehension', 'filter: [x for x in xs if …]'],
  ['/sort/build', 'sort: build the objects'],
  ['/sort/key', "sort: sort_by(xs, 'score')"],
  ['/sort/lambda', 'sort: sort_by(xs, r => r.score, true)'],
] as const;

/** A duration given in ms, in the unit that reads best (ms or µs). */
function duration(ms: number): string {
  return ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(2)} µs`;
}

/** Compiles every corpus file, failing loudly: a benchmark of a corpus that does not compile measures nothing. */
function compileAll(files: readonly CorpusFile[]): CompiledModule[] {
  return files.map((f) => {
    const { module, diagnostics } = compileSource(f.file, f.source, COMPILE_OPTIONS);
    if (!module) throw new Error(`corpus file ${f.file} does not compile: ${diagnostics.map((d) => `${d.line}:${d.col} ${d.code} ${d.message}`).join('; ')}`);
    return module;
  });
}

async function main(): Promise<void> {
  const corpus = generateCorpus(FILE_COUNT);
  const lines = countLines(corpus);
  const modules = compileAll(corpus);
  const artefacts = modules.map(encodeModule);
  const artefactBytes = artefacts.reduce((n, a) => n + a.length, 0);

  const dispatchDir = mkdtempSync(join(tmpdir(), 'rvm-bench-dispatch-'));
  writeFileSync(join(dispatchDir, 'sum.rvm'), DISPATCH_APP);
  const app = await loadApp(dispatchDir, { cache: false, logger: createLogger({ quiet: true }) });
  const check = await inject(app, { url: '/sum' });
  const expected = (LOOP_COUNT * (LOOP_COUNT + 1)) / 2;
  if (check.status !== 200 || check.json().total !== expected) throw new Error(`GET /sum answered ${check.status} ${check.body}`);

  const lambdaDir = mkdtempSync(join(tmpdir(), 'rvm-bench-lambda-'));
  writeFileSync(join(lambdaDir, 'lambda.rvm'), LAMBDA_APP);
  const lambdaApp = await loadApp(lambdaDir, { cache: false, logger: createLogger({ quiet: true }) });
  for (const [url] of LAMBDA_TASKS) {
    const r = await inject(lambdaApp, { url });
    if (r.status !== 200) throw new Error(`GET ${url} answered ${r.status} ${r.body}`);
  }

  const bench = new Bench({ time: TASK_TIME_MS });
  bench
    .add('lex corpus', () => {
      for (const f of corpus) tokenize(f.file, f.source);
    })
    .add('parse corpus', () => {
      for (const f of corpus) parse(f.file, f.source);
    })
    .add('compile corpus (parse + compile)', () => {
      for (const f of corpus) compileSource(f.file, f.source, COMPILE_OPTIONS);
    })
    .add('decode corpus artefacts (cache load)', () => {
      for (let i = 0; i < artefacts.length; i++) decodeModule(artefacts[i]!, corpus[i]!.file);
    })
    .add('encode corpus artefacts (cache write)', () => {
      for (const m of modules) encodeModule(m);
    })
    .add(`inject GET /sum (while loop, ${fmt(LOOP_COUNT)} iterations)`, async () => {
      await inject(app, { url: '/sum' });
    })
    .add('inject GET /noop (request overhead)', async () => {
      await inject(app, { url: '/noop' });
    });
  for (const [url, name] of LAMBDA_TASKS) {
    bench.add(`lambdas ${name}`, async () => {
      await inject(lambdaApp, { url });
    });
  }
  await bench.run();
  await app.close();
  await lambdaApp.close();
  rmSync(dispatchDir, { recursive: true, force: true });
  rmSync(lambdaDir, { recursive: true, force: true });

  const mean = new Map<string, number>();
  const rows: string[][] = [];
  for (const task of bench.tasks) {
    const r = task.result;
    if (r.state !== 'completed') {
      rows.push([task.name, '-', '-', '-', '-', r.state === 'errored' ? String(r.error) : r.state]);
      continue;
    }
    mean.set(task.name, r.latency.mean);
    rows.push([
      task.name,
      fmt(r.throughput.mean, 1),
      duration(r.latency.mean),
      duration(r.latency.p99),
      `±${r.latency.rme.toFixed(1)}%`,
      String(r.latency.samplesCount),
    ]);
  }

  console.log(`\nMicro benchmarks — ${machineDescription()}`);
  console.log(`corpus: ${corpus.length} files, ${fmt(lines)} lines, ${fmt(artefactBytes)} bytes of artefacts\n`);
  console.log(formatTable(['task', 'ops/s', 'mean', 'p99', 'rme', 'samples'], rows));

  const perSecond = (task: string, units: number) => {
    const ms = mean.get(task);
    return ms ? (units * 1000) / ms : NaN;
  };
  const derived: string[][] = [
    ['lex', `${fmt(perSecond('lex corpus', lines))} lines/s`],
    ['parse (lex + parse)', `${fmt(perSecond('parse corpus', lines))} lines/s`],
    ['compile (lex + parse + compile)', `${fmt(perSecond('compile corpus (parse + compile)', lines))} lines/s`],
    ['cache load (decode)', `${fmt(perSecond('decode corpus artefacts (cache load)', lines))} lines/s`],
  ];
  const compileMs = mean.get('compile corpus (parse + compile)');
  const decodeMs = mean.get('decode corpus artefacts (cache load)');
  if (compileMs && decodeMs) derived.push(['cache load vs compile', `${(compileMs / decodeMs).toFixed(1)}× faster`]);
  const sumMs = mean.get(`inject GET /sum (while loop, ${fmt(LOOP_COUNT)} iterations)`);
  const noopMs = mean.get('inject GET /noop (request overhead)');
  if (sumMs && noopMs && sumMs > noopMs) {
    derived.push(['VM loop iterations (inject overhead subtracted)', `${fmt((LOOP_COUNT * 1000) / (sumMs - noopMs))} iterations/s`]);
  }
  // Each way of walking the list, without the building the routes share, against the for loop.
  const walk = (url: string, base: string) => {
    const name = (u: string) => `lambdas ${LAMBDA_TASKS.find(([x]) => x === u)![1]}`;
    return (mean.get(name(url)) ?? NaN) - (mean.get(name(base)) ?? NaN);
  };
  for (const kind of ['map', 'filter'] as const) {
    const loop = walk(`/${kind}/for`, '/build');
    for (const way of ['lambda', 'comprehension'] as const) {
      derived.push([
        `${kind}: ${way} vs for loop (${fmt(LIST_COUNT)} items, building subtracted)`,
        `${(walk(`/${kind}/${way}`, '/build') / loop).toFixed(2)}×`,
      ]);
    }
  }
  derived.push([`sort_by(xs, 'score'), ${fmt(SORT_COUNT)} objects (building subtracted)`, duration(walk('/sort/key', '/sort/build'))]);
  derived.push([`sort_by(xs, r => r.score, true), ${fmt(SORT_COUNT)} objects (building subtracted)`, duration(walk('/sort/lambda', '/sort/build'))]);
  console.log('');
  console.log(formatTable(['derived', 'figure'], derived));

  await runValidationBench();
  await runStartupBench(FILE_COUNT);
}

main().catch((err: unknown) => {
  console.error(`micro benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
});
