/**
 * Validation benchmark (tinybench): the user-creation body validated by rvm's engine
 * (`planValidation` once, then `validateFields` per body, through the real registry of the
 * standard plugins) against ajv's compiled validator of the equivalent JSON Schema (ajv's
 * `allErrors` and `useDefaults`, ajv-formats for `email`). Two shapes: the user-creation route
 * (email, name, role) and a richer signup (plus password and age). Each call gets a fresh
 * shallow copy of the body, as each request brings a freshly parsed one (ajv's defaults write
 * into it). Target: rvm ≥ 0.5× ajv ops/s on valid bodies.
 *
 * Run alone (`node dist/bench/validation.js`) or as part of micro.ts. Env: BENCH_TIME (ms per task).
 */
import { pathToFileURL } from 'node:url';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { Bench } from 'tinybench';
import { compileSource } from '../vm/compiler/compiler.js';
import { loadPlugins } from '../vm/host/registry.js';
import { loadSettings } from '../vm/runtime/config.js';
import { planValidation, validateFields } from '../vm/runtime/validate.js';
import { STANDARD_PLUGINS } from '../stdlib/index.js';
import { fmt, formatTable, machineDescription } from './util.js';

/** Milliseconds of sampling per task: 1 s gives a relative margin of error of a few percent. */
const TASK_TIME_MS = Number(process.env.BENCH_TIME) > 0 ? Number(process.env.BENCH_TIME) : 1000;
/** The target (bench/README.md): rvm at least half of ajv's ops/s on valid bodies. */
const TARGET_VS_AJV = 0.5;

// ajv-formats is CommonJS with `exports.default`: under NodeNext the default import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

interface Shape {
  name: string;
  /** The route as an app writes it. */
  source: string;
  /** The same rules as JSON Schema. */
  schema: Record<string, unknown>;
  valid: Record<string, unknown>[];
  invalid: Record<string, unknown>[];
}

/** The user-creation fields (as in bench/apps/hello/create-user.rvm); the signup shape adds two. */
const USERS_FIELDS = ['email: text @required @email', 'name: text @required @minLength(2)', "role: text @default('user') @one_of('user', 'admin')"];

/** A POST route that validates `fields` and answers 201 with the validated body. */
function validatedRoute(path: string, fields: readonly string[]): string {
  return `route POST ${path} {\n  validate {\n${fields.map((f) => `    ${f}\n`).join('')}  }\n  response.created(body)\n}\n`;
}

const USERS_PROPERTIES = {
  email: { type: 'string', format: 'email' },
  name: { type: 'string', minLength: 2 },
  role: { type: 'string', enum: ['user', 'admin'], default: 'user' },
};

const SHAPES: Shape[] = [
  {
    name: 'users (email, name, role)',
    source: validatedRoute('/api/users', USERS_FIELDS),
    schema: { type: 'object', properties: USERS_PROPERTIES, required: ['email', 'name'] },
    valid: [
      { email: 'ada@example.com', name: 'Ada Lovelace' },
      { email: 'grace.hopper@navy.example.org', name: 'Grace', role: 'admin' },
      { email: 'alan+test@example.co.uk', name: 'Al', role: 'user' },
    ],
    invalid: [{ email: 'not-an-email', name: 'A', role: 'root' }, { email: 'ada@example.com', name: 'A' }, { name: 42 }],
  },
  {
    name: 'signup (+ password, age)',
    source: validatedRoute('/api/signup', [...USERS_FIELDS, 'password: text @required @min(8) @max(128)', 'age: int @min(18) @max(120)']),
    schema: {
      type: 'object',
      properties: {
        ...USERS_PROPERTIES,
        password: { type: 'string', minLength: 8, maxLength: 128 },
        age: { type: 'integer', minimum: 18, maximum: 120 },
      },
      required: ['email', 'name', 'password', 'age'],
    },
    valid: [
      { email: 'ada@example.com', name: 'Ada Lovelace', password: 'correct horse battery', age: 36 },
      { email: 'grace.hopper@navy.example.org', name: 'Grace', role: 'admin', password: 'c0b0l-rules!', age: 85 },
      { email: 'alan+test@example.co.uk', name: 'Al', role: 'user', password: '12345678', age: 18 },
    ],
    invalid: [
      { email: 'not-an-email', name: 'A', role: 'root', password: 'short', age: 17 },
      { email: 'ada@example.com', name: 'Ada', password: 'correct horse battery', age: '36' },
      { name: 42 },
    ],
  },
];

/** rvm's compiled plan of the shape's route, checked to agree with ajv on every sample body. */
async function rvmValidator(shape: Shape): Promise<(body: Record<string, unknown>) => boolean> {
  const registry = await loadPlugins([...STANDARD_PLUGINS], loadSettings(null, {}));
  const { module, diagnostics } = compileSource('bench.rvm', shape.source, { compilerVersion: 'bench', pluginsFingerprint: registry.fingerprint });
  if (!module) throw new Error(`bench route does not compile: ${diagnostics.map((d) => d.code).join(', ')}`);
  const meta = module.routes[0]!;
  const planned = planValidation([{ meta, file: 'bench.rvm' }], registry);
  if (planned.diagnostics.length > 0) throw new Error(`bench route does not validate: ${planned.diagnostics.map((d) => d.code).join(', ')}`);
  const plan = planned.plans.get(meta)!.body!;
  return (body) => validateFields(plan, body, false).errors === null;
}

function ajvValidator(shape: Shape): (body: Record<string, unknown>) => boolean {
  const ajv = new Ajv({ allErrors: true, useDefaults: true });
  addFormats(ajv);
  const validate = ajv.compile(shape.schema);
  return (body) => validate(body) === true;
}

/** Both validators must agree with the samples' labels: a benchmark of a wrong answer measures nothing. */
function checkAgreement(shape: Shape, rvm: (b: Record<string, unknown>) => boolean, ajv: (b: Record<string, unknown>) => boolean): void {
  for (const [bodies, expected] of [
    [shape.valid, true],
    [shape.invalid, false],
  ] as const) {
    for (const body of bodies) {
      if (rvm({ ...body }) !== expected || ajv({ ...body }) !== expected) {
        throw new Error(`${shape.name}: rvm ${rvm({ ...body })}, ajv ${ajv({ ...body })} for ${JSON.stringify(body)} (expected ${expected})`);
      }
    }
  }
}

/** One validation of each sample body per task iteration, each on a fresh shallow copy. */
function task(bodies: Record<string, unknown>[], validate: (b: Record<string, unknown>) => boolean): () => void {
  return () => {
    for (let i = 0; i < bodies.length; i++) validate({ ...bodies[i]! });
  };
}

/** Runs the benchmark, prints its table and returns the valid-body ratios rvm/ajv per shape. */
export async function runValidationBench(): Promise<Map<string, number>> {
  const bench = new Bench({ time: TASK_TIME_MS });
  for (const shape of SHAPES) {
    const rvm = await rvmValidator(shape);
    const ajv = ajvValidator(shape);
    checkAgreement(shape, rvm, ajv);
    bench
      .add(`${shape.name} valid: rvm`, task(shape.valid, rvm))
      .add(`${shape.name} valid: ajv`, task(shape.valid, ajv))
      .add(`${shape.name} invalid: rvm`, task(shape.invalid, rvm))
      .add(`${shape.name} invalid: ajv`, task(shape.invalid, ajv));
  }
  await bench.run();

  const perBody = new Map<string, number>();
  const rows: string[][] = [];
  for (const t of bench.tasks) {
    const r = t.result;
    if (r.state !== 'completed') {
      rows.push([t.name, '-', '-', r.state === 'errored' ? String(r.error) : r.state]);
      continue;
    }
    // Each iteration validates three bodies.
    const bodiesPerSecond = r.throughput.mean * 3;
    perBody.set(t.name, bodiesPerSecond);
    rows.push([t.name, fmt(bodiesPerSecond), `${((r.latency.mean * 1e6) / 3).toFixed(0)} ns`, `±${r.latency.rme.toFixed(1)}%`]);
  }
  console.log(`\nValidation benchmark — ${machineDescription()}`);
  console.log('bodies/s = validations per second (each iteration validates 3 sample bodies on fresh copies)\n');
  console.log(formatTable(['task', 'bodies/s', 'per body', 'rme'], rows));

  const ratios = new Map<string, number>();
  const lines: string[] = [];
  for (const shape of SHAPES) {
    for (const kind of ['valid', 'invalid']) {
      const r = perBody.get(`${shape.name} ${kind}: rvm`);
      const a = perBody.get(`${shape.name} ${kind}: ajv`);
      const ratio = r && a ? r / a : NaN;
      if (kind === 'valid') ratios.set(shape.name, ratio);
      const verdict = kind === 'valid' ? (ratio >= TARGET_VS_AJV ? 'PASS' : 'MISS') + '  ' : '      ';
      lines.push(
        `${verdict}${shape.name}, ${kind} bodies: rvm ${Number.isNaN(ratio) ? '-' : ratio.toFixed(2) + '×'} ajv${kind === 'valid' ? ` (target ≥ ${TARGET_VS_AJV}×)` : ''}`,
      );
    }
  }
  console.log('');
  for (const line of lines) console.log(line);
  return ratios;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runValidationBench().catch((err: unknown) => {
    console.error(`validation benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  });
}
