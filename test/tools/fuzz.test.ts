import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fuzzApp, type FuzzReport } from '../../tools/fuzz.js';
import { fuzzCommand } from '../../tools/commands/fuzz.js';
import { PROCESS_IO, UsageError, type ParsedArgs } from '../../tools/commands/common.js';
import { COMMANDS } from '../../tools/commands/index.js';
import { buildRequest, shellQuote, toCurl } from '../../tools/fuzz-request.js';
import { encode, sampleOf } from '../../tools/fuzz-values.js';
import { showcaseCopy } from '../support/showcase.js';
import { rvm, rvmProcess } from '../support/rvm-command.js';
import { tempApp } from '../support/temp-app.js';

/** A copy: fuzzing the showcase stores records, and no test writes into the repository's folder. */
const showcase = showcaseCopy();
const SHOWCASE = showcase.dir;
after(() => showcase.remove());
/** Enough requests per route to hit `n = 0` in a range of eleven values, few enough to stay fast. */
const RUNS = 40;

/** A route that fails on a valid input, and routes using a third-party plugin's faulty validators. */
const BUGGY_ROUTES = `route POST /divide {
  validate {
    n: int @range(0, 10)
    label?: text @maxLength(5)
  }
  response.ok({ r: 100 / body.n })
}

route POST /even {
  validate {
    n: int @even
  }
  response.ok({ n: body.n })
}

route POST /quantity {
  validate {
    q: int @quantity
  }
  response.ok({ q: body.q })
}

route GET /pages/:id {
  query {
    page: int @min(1)
    sort?: text @one_of('asc', 'desc')
  }
  response.ok({ page: query.page })
}

route POST /password {
  validate {
    password: text @minLength(8)
    confirm: text @same('password')
  }
  response.ok({ ok: true })
}

route POST /refuses {
  validate {
    n: int
  }
  response.unprocessable('the handler says no')
}
`;

/** `@even` accepts everything although its rejecting values are odd; `@quantity` offers text for an int field. */
const LENIENT_PLUGIN = `export default {
  name: 'lenient',
  version: '1.0.0',
  setup(rvm) {
    rvm.validator('even', {
      types: ['int'], params: [], doc: 'An even number.',
      build: () => () => true,
      message: () => 'must be even',
      arbitraries: {
        accepts: (fc) => fc.integer({ min: -1000, max: 1000 }).map((n) => n * 2),
        rejects: (fc) => fc.integer({ min: -1000, max: 1000 }).map((n) => n * 2 + 1),
      },
    });
    rvm.validator('quantity', {
      types: ['int'], params: [], doc: 'A quantity.',
      build: () => () => true,
      message: () => 'must be a quantity',
      arbitraries: { accepts: (fc) => fc.integer({ min: 1, max: 99 }).map(String) },
    });
  },
};
`;

/** A clean route behind a middleware that lets only requests with `X-API-Key: k` through. */
const KEYED_APP = {
  '_middleware.rvm': "middleware {\n  if request.headers['X-API-Key'] == 'k' {\n    next()\n  } else {\n    fail 401 'no key'\n  }\n}\n",
  'echo.rvm': 'route POST /echo {\n  validate {\n    n: int @range(0, 10)\n  }\n  response.ok(body)\n}\n',
};

const UPLOAD_ROUTE = `route POST /avatar {
  validate {
    name: text @minLength(2)
    age: int @min(18) @max(120)
    avatar: file @image @max_size('2KB')
  }
  response.created({ name: body.name, size: body.avatar.size })
}
`;

function args(positionals: string[], flags: Record<string, string> = {}): ParsedArgs {
  return { positionals, flags: new Map(Object.entries(flags)), help: false };
}

describe('rvm fuzz on the showcase', () => {
  test('fuzzes clean, sending valid and invalid requests to every validated route', async () => {
    const lines: string[] = [];
    const report = await fuzzApp(SHOWCASE, { runs: RUNS, seed: 7, headers: { 'x-api-key': 'showcase-key' }, log: (l) => lines.push(l) });
    assert.deepEqual(report.findings, [], lines.join('\n'));
    assert.equal(report.exitCode, 0);
    for (const r of report.routes) {
      assert.equal(r.valid.sent, RUNS, r.route);
      assert.equal(r.invalid.sent, RUNS, r.route);
      assert.equal(r.valid.accepted + r.valid.blocked, RUNS, `${r.route}: no valid request is refused by validation`);
      assert.equal(r.invalid.refused + r.invalid.blocked, RUNS, `${r.route}: no invalid request is accepted`);
    }
    // The seed's routes get past the API-key middleware: their requests reach validation.
    for (const name of ['POST /api/users', 'POST /api/signup', 'POST /api/public/preview', 'GET /search']) {
      const r = report.routes.find((x) => x.route === name);
      assert.ok(r, name);
      assert.ok(r.valid.accepted > 0, `${name}: some valid request is accepted`);
      assert.equal(r.invalid.refused, RUNS, `${name}: every invalid request is refused`);
    }
    assert.match(lines[lines.length - 1]!, /0 findings \(seed 7;/);
  });

  test('without the API key the /api routes are blocked, which is not a finding', async () => {
    const report = await fuzzApp(SHOWCASE, { runs: 5, seed: 7 });
    assert.equal(report.exitCode, 0);
    const users = report.routes.find((r) => r.route === 'POST /api/users')!;
    assert.equal(users.valid.blocked, 5);
    assert.equal(users.statuses['401'], 10);
  });
});

describe('rvm fuzz on a buggy app', () => {
  const dir = tempApp(
    { after },
    { 'routes.rvm': BUGGY_ROUTES, 'lenient.mjs': LENIENT_PLUGIN, 'rvm.config.json': JSON.stringify({ plugins: ['./lenient.mjs'] }) },
  );
  let report: FuzzReport;
  before(async () => {
    report = await fuzzApp(dir, { runs: RUNS, seed: 11 });
  });

  test('exits 1 with one finding of each kind, on the right route and field', () => {
    assert.equal(report.exitCode, 1);
    const found = report.findings.map((f) => `${f.kind} ${f.route} ${f.field ?? '-'} ${f.mutation ?? '-'}`).sort();
    assert.deepEqual(found, ['invalid_accepted POST /even n rejected by @even', 'server_error POST /divide - -', 'valid_refused POST /quantity q -']);
  });

  test('a finding carries the status, the body, the log line and a curl command that reproduces it', () => {
    const crash = report.findings.find((f) => f.kind === 'server_error')!;
    assert.equal(crash.status, 500);
    assert.equal(JSON.parse(crash.body).code, 'division_by_zero');
    assert.match(crash.log.join('\n'), /routes\.rvm:6/);
    assert.equal(JSON.parse((crash.request as { body: string }).body).n, 0);
    assert.match(crash.curl, /^curl -i -X POST 'http:\/\/127\.0\.0\.1:3000\/divide' -H 'content-type: application\/json' --data-raw '\{"n":0/);
    const accepted = report.findings.find((f) => f.kind === 'invalid_accepted')!;
    assert.equal(accepted.status, 200);
    assert.equal(Math.abs(JSON.parse(accepted.body).n) % 2, 1);
    const refused = report.findings.find((f) => f.kind === 'valid_refused')!;
    assert.equal(refused.status, 422);
    assert.equal(JSON.parse(refused.body).details[0].rule, 'type');
  });

  test("a handler's own 422 on a valid request is counted as blocked, not as refused by validation", () => {
    const r = report.routes.find((x) => x.route === 'POST /refuses')!;
    assert.equal(r.valid.blocked, RUNS);
    assert.equal(r.invalid.refused, RUNS);
    assert.ok(!report.findings.some((f) => f.route === 'POST /refuses'));
  });

  test('routes without a bug fuzz clean: query coercion, path parameters and @same', () => {
    for (const name of ['GET /pages/:id', 'POST /password']) {
      const r = report.routes.find((x) => x.route === name)!;
      assert.equal(r.valid.accepted, RUNS, name);
      assert.equal(r.invalid.refused, RUNS, name);
      assert.ok(!report.findings.some((f) => f.route === name), name);
    }
  });

  test('the same seed gives the same report; another seed other requests', async () => {
    const again = await fuzzApp(dir, { runs: RUNS, seed: 11 });
    assert.deepEqual(again, report);
    const other = await fuzzApp(dir, { runs: RUNS, seed: 12 });
    assert.notDeepEqual(
      other.findings.map((f) => f.curl),
      report.findings.map((f) => f.curl),
    );
  });
});

describe('rvm fuzz with uploads', () => {
  test('a route with a file field is fuzzed with multipart bodies; an oversized upload counts as refused', async (t) => {
    const dir = tempApp(t, { 'avatar.rvm': UPLOAD_ROUTE });
    const report = await fuzzApp(dir, { runs: RUNS, seed: 3 });
    assert.deepEqual(report.findings, []);
    const r = report.routes[0]!;
    assert.equal(r.valid.accepted, RUNS);
    assert.equal(r.invalid.refused, RUNS);
    assert.ok((r.statuses['413'] ?? 0) > 0, 'some upload went over @max_size');
  });

  test('a multipart request prints as curl with --form-string fields and an inlined file', () => {
    const request = buildRequest(
      'POST',
      '/avatar',
      null,
      {
        transport: 'multipart',
        fields: [
          ['name', { kind: 'texts', values: ["O'Brien"] }],
          ['avatar', { kind: 'file', file: { name: 'a.png', bytes: Uint8Array.from([0x89, 0x50, 0x4e, 0x47]) } }],
        ],
      },
      {},
    );
    assert.equal(
      toCurl(request),
      `curl -i -X POST 'http://127.0.0.1:3000/avatar' --form-string 'name=O'\\''Brien' -F 'avatar=@'<(printf %s iVBORw== | base64 -d)';filename=a.png'`,
    );
  });

  test('shell quoting keeps control characters readable', () => {
    assert.equal(shellQuote('a\nb'), "$'a\\nb'");
    assert.equal(shellQuote("it's"), `'it'\\''s'`);
  });

  test('values a transport would change are not sent as valid values', () => {
    assert.equal(sampleOf('a\ud800', 'text', 'query'), null);
    assert.equal(sampleOf('a\nb', 'text', 'multipart'), null);
    assert.notEqual(sampleOf('a\r\nb', 'text', 'multipart'), null);
    assert.equal(sampleOf([1, 2], 'list', 'query'), null, 'numbers in a list arrive as text');
    assert.deepEqual(sampleOf('5', 'int', 'json')?.value, '5', 'a value of the wrong type is kept: refusing it is a finding');
    assert.equal(encode({ a: 1 }, 'object', 'multipart'), null);
    assert.equal(encode([], 'list', 'query'), null);
    assert.equal(encode(Number.NaN, 'number', 'json'), null);
    assert.deepEqual(encode(5, 'int', 'query'), { kind: 'texts', values: ['5'] });
  });
});

describe('rvm fuzz on apps that cannot run', () => {
  test('an app that does not compile: its diagnostics and exit 1, nothing sent', async (t) => {
    const dir = tempApp(t, { 'bad.rvm': 'route POST /x {\n  validate {\n    email: text @emial\n  }\n  response.ok(body)\n}\n' });
    const lines: string[] = [];
    const report = await fuzzApp(dir, { runs: 5, seed: 1, log: (l) => lines.push(l) });
    assert.equal(report.exitCode, 1);
    assert.deepEqual(
      report.diagnostics.map((d) => d.code),
      ['E_UNKNOWN_VALIDATOR'],
    );
    assert.deepEqual(report.routes, []);
    assert.match(lines.join('\n'), /E_UNKNOWN_VALIDATOR/);
  });

  test('a plugin that fails to load: the error and exit 1', async (t) => {
    const dir = tempApp(t, { 'a.rvm': 'route GET / {\n  response.ok(1)\n}\n', 'rvm.config.json': JSON.stringify({ plugins: ['./missing.mjs'] }) });
    const report = await fuzzApp(dir, { runs: 5, seed: 1 });
    assert.equal(report.exitCode, 1);
    assert.match(report.error ?? '', /missing\.mjs/);
  });
});

describe('rvm fuzz command line', () => {
  test('bad --runs and --seed are usage errors (exit 2)', async () => {
    const bad: Record<string, string>[] = [{ runs: '0' }, { runs: 'abc' }, { runs: '1.5' }, { seed: 'x' }, { header: 'no colon' }];
    for (const flags of bad) {
      await assert.rejects(fuzzCommand(args([SHOWCASE], flags), PROCESS_IO), UsageError, JSON.stringify(flags));
    }
  });

  test('a missing folder is a one-line failure', async () => {
    await assert.rejects(fuzzCommand(args([join(tmpdir(), 'no-such-rvm-app')]), PROCESS_IO), /no such folder/);
  });

  test('through the CLI: usage errors exit 2, findings exit 1, a clean app exits 0', async (t) => {
    assert.ok(COMMANDS.some((c) => c.name === 'fuzz'));
    assert.equal(rvmProcess(['fuzz', SHOWCASE, '--runs', '0']).status, 2, 'the binary exits with the code');
    const clean = await rvm(['fuzz', tempApp(t, KEYED_APP), '--runs', '5', '--seed', '1', '--header', 'X-API-Key: k']);
    assert.equal(clean.status, 0, clean.stdout);
    assert.match(clean.stdout, /POST \/echo .*valid 5 \(5 accepted/, 'the --header reaches the app: no valid request is blocked');
    const dir = tempApp(t, { 'routes.rvm': BUGGY_ROUTES, 'lenient.mjs': LENIENT_PLUGIN, 'rvm.config.json': JSON.stringify({ plugins: ['./lenient.mjs'] }) });
    const r = await rvm(['fuzz', dir, '--runs', String(RUNS), '--seed', '11']);
    assert.equal(r.status, 1);
    assert.match(r.stdout, /FINDING server error: POST \/divide/);
  });
});
