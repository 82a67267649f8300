/**
 * The reference page's snippet builders (`stdlib/reference/assets/snippets.js`, imported as the
 * browser gets it): every body kind and method in cURL, fetch and Dart, quoting and encoding,
 * and the cURL and fetch snippets run against a real server.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadApp } from '../../tools/host.js';
import { startServer } from '../../vm/runtime/http/server.js';
import { captureLogger } from '../../vm/runtime/log.js';

type Pairs = [string, string][];
type Body = { kind: 'json'; value: unknown } | { kind: 'form'; fields: Pairs } | { kind: 'multipart'; fields: Pairs; files: Pairs };
interface SnippetRequest {
  method: string;
  origin: string;
  path: string;
  pathParams?: Record<string, string>;
  query?: Pairs;
  headers?: Pairs;
  cookies?: Pairs;
  body?: Body | null;
}
interface Snippets {
  requestUrl(req: SnippetRequest): string;
  shellQuote(text: string): string;
  curlSnippet(req: SnippetRequest): string;
  fetchSnippet(req: SnippetRequest): string;
  dartSnippet(req: SnippetRequest): string;
  dartString(text: string): string;
}

const S = (await import(new URL('../../../stdlib/reference/assets/snippets.js', import.meta.url).href)) as Snippets;

const execFileAsync = promisify(execFile);
const ORIGIN = 'http://localhost:3000';
const hasSh = spawnSync('sh', ['-c', 'true']).status === 0;
const hasCurl = hasSh && spawnSync('sh', ['-c', 'command -v curl']).status === 0;

/** The words a POSIX shell makes of a cURL snippet (curl replaced by printf). */
function shellWords(snippet: string): string[] {
  const out = spawnSync('sh', ['-c', `printf '%s\\0' ${snippet.replace(/^curl /, '')}`], { encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  return out.stdout.split('\0').slice(0, -1);
}

interface FetchCall {
  url: string;
  init: { method: string; headers?: Record<string, string>; body?: unknown; credentials?: string };
}

/** Runs a fetch snippet with a recording fetch; returns what it asked for. */
async function runFetch(snippet: string): Promise<FetchCall> {
  const calls: FetchCall[] = [];
  const fakeFetch = async (url: string, init: FetchCall['init']) => {
    calls.push({ url, init });
    return { status: 200, text: async () => '' };
  };
  const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<void>;
  await new AsyncFunction('fetch', 'console', snippet)(fakeFetch, { log() {} });
  assert.equal(calls.length, 1);
  return calls[0]!;
}

describe('URLs', () => {
  test('path parameters are substituted and encoded, query values encoded, repeats kept', () => {
    const url = S.requestUrl({
      method: 'GET',
      origin: ORIGIN,
      path: '/items/{id}/files/{name}',
      pathParams: { id: 'a/b c', name: "x'y" },
      query: [
        ['q', "it's a&b=c"],
        ['tag', 'a'],
        ['tag', 'ü'],
      ],
    });
    assert.equal(url, `${ORIGIN}/items/a%2Fb%20c/files/x'y?q=it's%20a%26b%3Dc&tag=a&tag=%C3%BC`);
  });
});

describe('no body on GET and HEAD', () => {
  const req: SnippetRequest = { method: 'GET', origin: ORIGIN, path: '/items', query: [['q', 'x']], body: { kind: 'json', value: { a: 1 } } };

  test('cURL sends none', () => {
    const words = shellWords(S.curlSnippet(req));
    assert.deepEqual(words, [`${ORIGIN}/items?q=x`]);
    assert.match(S.curlSnippet({ ...req, method: 'HEAD' }), /^curl --head /);
  });

  test('fetch sends none', async () => {
    const call = await runFetch(S.fetchSnippet(req));
    assert.equal(call.init.method, 'GET');
    assert.equal(call.init.body, undefined);
    assert.equal(call.init.headers, undefined);
  });

  test('Dart sends none', () => {
    const dart = S.dartSnippet(req);
    assert.match(dart, /await http\.get\(/);
    assert.doesNotMatch(dart, /body:|jsonEncode|dart:convert/);
    assert.match(S.dartSnippet({ ...req, method: 'HEAD' }), /http\.head\(/);
  });
});

describe('JSON bodies', () => {
  const value = { name: "O'Brien $HOME", tags: ['a', 'b'], n: 3, ok: true, nested: { x: null } };
  const req: SnippetRequest = { method: 'POST', origin: ORIGIN, path: '/items', headers: [['Authorization', 'Bearer t0k']], body: { kind: 'json', value } };

  test('cURL: content type, auth header and the exact JSON, quoted for the shell', { skip: !hasSh }, () => {
    const words = shellWords(S.curlSnippet(req));
    assert.deepEqual(words.slice(0, 3), ['-X', 'POST', `${ORIGIN}/items`]);
    assert.ok(words.includes('Authorization: Bearer t0k'));
    assert.ok(words.includes('content-type: application/json'));
    assert.deepEqual(JSON.parse(words[words.indexOf('--data') + 1]!), value);
  });

  test('fetch: JSON.stringify of the value with the content type', async () => {
    const snippet = S.fetchSnippet(req);
    assert.match(snippet, /JSON\.stringify\(/);
    const call = await runFetch(snippet);
    assert.equal(call.url, `${ORIGIN}/items`);
    assert.equal(call.init.headers!['content-type'], 'application/json');
    assert.equal(call.init.headers!.Authorization, 'Bearer t0k');
    assert.deepEqual(JSON.parse(call.init.body as string), value);
  });

  test('Dart: jsonEncode of a map literal, header set, $ escaped', () => {
    const dart = S.dartSnippet(req);
    assert.match(dart, /^import 'dart:convert';\nimport 'package:http\/http\.dart' as http;/);
    assert.match(dart, /http\.post\(\n\s+uri,\n\s+headers: \{[^}]*'Authorization': 'Bearer t0k',[^}]*'content-type': 'application\/json',/);
    assert.match(dart, /body: jsonEncode\(\{/);
    assert.ok(dart.includes(`'name': 'O\\'Brien \\$HOME'`));
    assert.ok(dart.includes(`'nested': {\n`));
  });
});

describe('form bodies', () => {
  const req: SnippetRequest = {
    method: 'PUT',
    origin: ORIGIN,
    path: '/p',
    body: {
      kind: 'form',
      fields: [
        ['name', "a b&c='d'"],
        ['x', '@file'],
      ],
    },
  };

  test('cURL: --data-urlencode per field, value intact', { skip: !hasSh }, () => {
    const words = shellWords(S.curlSnippet(req));
    assert.deepEqual(words, ['-X', 'PUT', `${ORIGIN}/p`, '--data-urlencode', "name=a b&c='d'", '--data-urlencode', 'x=@file']);
  });

  test('fetch: URLSearchParams', async () => {
    const call = await runFetch(S.fetchSnippet(req));
    assert.ok(call.init.body instanceof URLSearchParams);
    assert.deepEqual([...(call.init.body as URLSearchParams)], req.body!.kind === 'form' ? req.body!.fields : []);
  });

  test('Dart: a Map body (sent form-encoded by package:http)', () => {
    const dart = S.dartSnippet(req);
    assert.match(dart, /http\.put\(/);
    assert.match(dart, /body: \{\n\s+'name': 'a b&c=\\'d\\'',\n\s+'x': '@file',/);
    assert.doesNotMatch(dart, /jsonEncode/);
  });
});

describe('multipart bodies never drop files', () => {
  const req: SnippetRequest = {
    method: 'POST',
    origin: ORIGIN,
    path: '/avatars',
    headers: [['X-API-Key', 'k']],
    body: {
      kind: 'multipart',
      fields: [['title', '@not-a-file']],
      files: [
        ['avatar', 'photo.png'],
        ['doc', 'my file;1.pdf'],
      ],
    },
  };

  test('cURL: -F name=@file for files, --form-string for text', { skip: !hasSh }, () => {
    const words = shellWords(S.curlSnippet(req));
    assert.ok(words.includes('X-API-Key: k'));
    assert.equal(words[words.indexOf('--form-string') + 1], 'title=@not-a-file');
    const files = words.filter((_w, i) => words[i - 1] === '-F');
    assert.deepEqual(files, ['avatar=@photo.png', 'doc=@"my file;1.pdf"']);
  });

  test('fetch: FormData with every file appended', async () => {
    const snippet = S.fetchSnippet(req);
    assert.match(snippet, /new FormData\(\)/);
    assert.match(snippet, /form\.append\('avatar', await openAsBlob\('photo\.png'\), 'photo\.png'\);/);
    assert.match(snippet, /form\.append\('doc', await openAsBlob\('my file;1\.pdf'\), 'my file;1\.pdf'\);/);
    assert.doesNotMatch(snippet, /content-type/i, 'FormData sets its own boundary');
  });

  test('Dart: http.MultipartRequest with MultipartFile.fromPath for each file', () => {
    const dart = S.dartSnippet(req);
    assert.match(dart, /http\.MultipartRequest\('POST', uri\)/);
    assert.match(dart, /request\.fields\['title'\] = '@not-a-file';/);
    assert.match(dart, /request\.files\.add\(await http\.MultipartFile\.fromPath\('avatar', 'photo\.png'\)\);/);
    assert.match(dart, /request\.files\.add\(await http\.MultipartFile\.fromPath\('doc', 'my file;1\.pdf'\)\);/);
    assert.match(dart, /'X-API-Key': 'k'/);
  });
});

describe('quoting', () => {
  test("single quotes in shell words are written as '\\''", { skip: !hasSh }, () => {
    assert.equal(S.shellQuote("it's"), `'it'\\''s'`);
    for (const text of ["it's", "''", 'a\nb', '$(rm -rf /)', '`x`', '\\', '"q"']) assert.deepEqual(shellWords(`curl ${S.shellQuote(text)}`), [text]);
  });

  test('Dart strings escape quotes, backslashes, $ and control characters', () => {
    assert.equal(S.dartString("a'b\\c$d\n"), `'a\\'b\\\\c\\$d\\n'`);
  });

  test('other methods in Dart go through http.Request', () => {
    const dart = S.dartSnippet({ method: 'OPTIONS', origin: ORIGIN, path: '/x' });
    assert.match(dart, /http\.Request\('OPTIONS', uri\)/);
  });
});

describe('against a running server', () => {
  let dir: string;
  let close: () => Promise<void>;
  let origin: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-ref-snippets-'));
    writeFileSync(
      join(dir, 'api.rvm'),
      `route POST /items {
  validate {
    name: text @min(3)
    tags: list
  }
  response.created({ name: body.name, tags: body.tags, q: query.q })
}
route POST /avatars {
  validate {
    title: text
    avatar: file @image
  }
  response.created({ title: body.title, file: body.avatar.name })
}
route PUT /forms {
  validate { name: text }
  response.ok(body)
}`,
    );
    writeFileSync(join(dir, 'photo.png'), Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex'));
    const app = await loadApp(dir, { cache: false, logger: captureLogger() });
    const server = await startServer(app, { port: 0, host: '127.0.0.1' });
    origin = server.url;
    close = async () => {
      await server.close();
      await app.close();
    };
  });

  after(async () => {
    await close();
    rmSync(dir, { recursive: true, force: true });
  });

  const requests = (): [string, SnippetRequest, number, unknown][] => [
    [
      'json',
      { method: 'POST', origin, path: '/items', query: [['q', "it's & so"]], body: { kind: 'json', value: { name: "O'Brien", tags: ['a'] } } },
      201,
      { name: "O'Brien", tags: ['a'], q: "it's & so" },
    ],
    ['form', { method: 'PUT', origin, path: '/forms', body: { kind: 'form', fields: [['name', "a b&c='d'"]] } }, 200, { name: "a b&c='d'" }],
    [
      'multipart',
      { method: 'POST', origin, path: '/avatars', body: { kind: 'multipart', fields: [['title', "x'y"]], files: [['avatar', 'photo.png']] } },
      201,
      { title: "x'y", file: 'photo.png' },
    ],
  ];

  test('each fetch snippet gets the answer the route gives', async () => {
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<void>;
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      for (const [kind, req, status, body] of requests()) {
        const logged: unknown[][] = [];
        await new AsyncFunction('console', S.fetchSnippet(req))({ log: (...a: unknown[]) => logged.push(a) });
        assert.equal(logged[0]![0], status, kind);
        assert.deepEqual(JSON.parse(logged[0]![1] as string), body, kind);
      }
    } finally {
      process.chdir(cwd);
    }
  });

  test('each cURL snippet gets the answer the route gives', { skip: !hasCurl }, async () => {
    for (const [kind, req, , body] of requests()) {
      // Asynchronously: the server answering curl runs in this process.
      const out = await execFileAsync('sh', ['-c', `${S.curlSnippet(req)} --silent --max-time 10`], { cwd: dir, encoding: 'utf8' });
      assert.deepEqual(JSON.parse(out.stdout), body, kind);
    }
  });
});
