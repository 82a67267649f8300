/**
 * The test kit for plugin authors (`rvm/testing`): a fake call context to run a native or guard
 * without a VM or a socket, the plugins loaded as an app loads them (so natives are behind their
 * argument checks), and an app in a temporary folder with `inject` for requests end to end.
 *
 *     const kit = await loadForTest([greetings]);
 *     assert.equal(kit.call('greet', 'ann'), 'hello ann');
 *
 *     const app = await testApp({ plugins: [greetings], files: { 'hi.rvm': "route GET /hi { response.ok(greet('ann')) }" } });
 *     assert.equal((await app.inject({ url: '/hi' })).json(), 'hello ann');
 *     await app.close();
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { HALT } from '../vm/host/context.js';
import type { AppSettings, BodyKind, CallContext, Halt, RequestInfo, ResponseDraft } from '../vm/host/context.js';
import type { KeyValueStore } from '../vm/host/stores.js';
import type { NativeFn } from '../vm/host/natives.js';
import type { PluginDefinition } from '../vm/host/plugin.js';
import { loadPlugins, type PluginRegistry, type RegisteredGuard } from '../vm/host/registry.js';
import type { Value } from '../vm/values.js';
import { Budget } from '../vm/interp/budget.js';
import { callLambda } from '../vm/interp/interpreter.js';
import { RequestOrigins } from '../vm/runtime/request-origin.js';
import { createSecretSource } from '../vm/runtime/secrets.js';
import { createInProcessStore } from '../vm/runtime/stores/memory.js';
import { DEFAULT_LIMITS } from '../vm/runtime/limits.js';
import { NO_OUTBOUND } from '../vm/runtime/config.js';
import { defaultErrorCode, defaultErrorMessage } from '../vm/runtime/response.js';
import type { App } from '../vm/runtime/app.js';
// Through the composition root: an app under test has the standard plugins, as `rvm run` gives it.
import { loadApp } from '../tools/host.js';
import { inject, type InjectRequest, type InjectResponse } from '../vm/runtime/http/inject.js';
import { captureLogger, type CaptureLogger } from '../vm/runtime/log.js';

/** A call context that records what the native or guard did with it. */
export interface FakeContext extends CallContext {
  /** The machine's own budget: a test reads what natives charged (`charged`) and aborts the request (`abort`). */
  readonly budget: Budget;
  /** Lines written with `ctx.log`. */
  readonly logs: string[];
  /** Every `ctx.respond` (and `ctx.fail`, as the body it answers with). */
  readonly answers: { status: number; body: Value; kind: BodyKind }[];
  /** Every `ctx.fail`, with the message it defaulted to. */
  readonly failures: { status: number; message: string; code?: string; headers?: Record<string, string> }[];
  /** What guards left for after the body is read (`afterBody`), in order. */
  readonly bodyChecks: ((ctx: CallContext) => void | Halt)[];
  /** Bytes charged with `chargeMemory` (against the app's `limits.maxResultMemory`, this context alone) and not yet given back by `end`. */
  readonly memoryCharged: number;
  /** Ends the fake request: runs what natives left for its end (`atEnd`), in order, once, and gives back its charged memory. */
  end(): Promise<void>;
}

/** What a fake context is built from: request fields over a `GET /` request, middleware's `next`, the app settings. */
export interface FakeContextOptions {
  request?: Partial<RequestInfo>;
  next?: () => Value | Promise<Value>;
  app?: AppSettings;
  /** `ctx.store` (default: a new in-process store per context). */
  store?: KeyValueStore;
}

/** Settings of an app loaded from nowhere, in dev mode, with the default limits and no secrets. */
export const TEST_APP: AppSettings = {
  dir: null,
  dev: true,
  bodyLimit: 1024 * 1024,
  trustProxy: false,
  limits: DEFAULT_LIMITS,
  outbound: NO_OUTBOUND,
  config: {},
  secrets: createSecretSource(null, {}),
  workers: 1,
};

/** A response draft with case-insensitive headers, as the runtime's. */
function draft(): ResponseDraft {
  const headers = new Map<string, string | string[]>();
  return {
    status: 200,
    headers,
    body: null,
    kind: 'json',
    answered: false,
    setHeader(name, value) {
      headers.set(name.toLowerCase(), value);
    },
    appendHeader(name, value) {
      const key = name.toLowerCase();
      const prev = headers.get(key);
      headers.set(key, prev === undefined ? value : [...(Array.isArray(prev) ? prev : [prev]), value]);
    },
    getHeader(name) {
      return headers.get(name.toLowerCase());
    },
    removeHeader(name) {
      headers.delete(name.toLowerCase());
    },
  };
}

/**
 * The in-process store answering every call one turn of the event loop later, as a store over the
 * network (Redis, the primary's) does: for testing that a plugin accepts Promises from `ctx.store`.
 */
export function laggingStore(inner: KeyValueStore = createInProcessStore()): KeyValueStore {
  const later = <T>(f: () => T | Promise<T>) => new Promise<T>((resolve, reject) => setImmediate(() => Promise.resolve().then(f).then(resolve, reject)));
  return {
    get: (key) => later(() => inner.get(key)),
    set: (key, value, ttl) => later(() => inner.set(key, value, ttl)),
    delete: (key) => later(() => inner.delete(key)),
    compareAndSet: (key, expected, next, ttl) => later(() => inner.compareAndSet(key, expected, next, ttl)),
    hit: (key, limit, windowMs, now) => later(() => inner.hit(key, limit, windowMs, now)),
    peek: (key, limit, windowMs, now) => later(() => inner.peek(key, limit, windowMs, now)),
    reset: (key) => later(() => inner.reset(key)),
  };
}

/** A context for a `GET /` request from 127.0.0.1 (fields overridden by `options.request`), with an in-memory store. */
export function fakeContext(options: FakeContextOptions = {}): FakeContext {
  const request: RequestInfo = {
    id: 'test-1',
    method: 'GET',
    path: '/',
    url: '/',
    route: 'GET /',
    headers: {},
    ip: '127.0.0.1',
    proxied: false,
    secure: false,
    params: {},
    query: {},
    cookies: {},
    body: null,
    ...options.request,
  };
  const response = draft();
  const logs: string[] = [];
  const answers: FakeContext['answers'] = [];
  const failures: FakeContext['failures'] = [];
  const bodyChecks: FakeContext['bodyChecks'] = [];
  const endListeners: (() => void | Promise<void>)[] = [];
  const origins = new RequestOrigins();
  const respond = (status: number, body: Value, kind: BodyKind = 'json'): Halt => {
    answers.push({ status, body, kind });
    response.status = status;
    response.body = body;
    response.kind = kind;
    response.answered = true;
    return HALT;
  };
  const app = options.app ?? TEST_APP;
  let memoryCharged = 0;
  return {
    request,
    response,
    app,
    budget: new Budget(),
    store: options.store ?? createInProcessStore(),
    locals: new Map(),
    logs,
    answers,
    failures,
    log: (message) => void logs.push(message),
    bodyChecks,
    afterBody: (check) => void bodyChecks.push(check),
    atEnd: (listener) => void endListeners.push(listener),
    // A lambda runs only inside the VM: a native test that calls one goes through a compiled app.
    call: (f, ...args) => callLambda(f, args),
    get memoryCharged() {
      return memoryCharged;
    },
    chargeMemory(bytes) {
      if (memoryCharged + bytes > app.limits.maxResultMemory) return false;
      memoryCharged += bytes;
      return true;
    },
    // The fake request's data is what the client sent; a fake request validates nothing.
    requestOrigin: (value) => origins.of(value, [request.body, request.query, request.params, request.cookies] as Value[], []),
    async end() {
      for (const listener of endListeners.splice(0)) await listener();
      memoryCharged = 0;
    },
    respond,
    fail(status, message, code, headers) {
      failures.push({ status, message: message ?? defaultErrorMessage(status), code, headers });
      for (const [name, value] of Object.entries(headers ?? {})) response.setHeader(name, value);
      return respond(status, { error: message ?? defaultErrorMessage(status), code: code ?? defaultErrorCode(status) }, 'json');
    },
    next:
      options.next ??
      (() => {
        throw new Error('next() called outside middleware');
      }),
    stream() {
      throw new Error('stream() is for built-in endpoints; test it through testApp() and inject');
    },
  };
}

/** Plugins loaded for a test: their registry, and their natives and guards by name. */
export interface LoadedPlugins {
  readonly registry: PluginRegistry;
  /** Calls a native as a route would (arguments checked) on a fresh fake context. */
  call(name: string, ...args: (Value | undefined)[]): ReturnType<NativeFn>;
  /** Calls a native on the given context. */
  callIn(ctx: CallContext, name: string, ...args: (Value | undefined)[]): ReturnType<NativeFn>;
  /** A registered guard; throws when there is none by that name. */
  guard(name: string): RegisteredGuard;
}

/** Loads plugins as an app does (dependencies first, natives behind their argument checks), for `app` settings. */
export async function loadForTest(plugins: PluginDefinition[], app: AppSettings = TEST_APP): Promise<LoadedPlugins> {
  const registry = await loadPlugins(plugins, app);
  const callIn = (ctx: CallContext, name: string, ...args: (Value | undefined)[]) => {
    const native = registry.natives.get(name);
    if (native === undefined) throw new Error(`no native '${name}' is registered`);
    return native.fn(ctx, ...(args as Value[]));
  };
  return {
    registry,
    call: (name, ...args) => callIn(fakeContext({ app }), name, ...args),
    callIn,
    guard(name) {
      const guard = registry.guards.get(name);
      if (guard === undefined) throw new Error(`no guard '${name}' is registered`);
      return guard;
    },
  };
}

/** An app for a test: its route files, its plugins (after the standard ones) and its settings. */
export interface TestAppOptions {
  /** Route files by path under the app folder: `{ 'posts.rvm': 'route GET /posts { ... }' }`. */
  files: Record<string, string>;
  plugins?: PluginDefinition[];
  /** The app's rvm.config.json. */
  config?: Record<string, unknown>;
  /** Dev mode (error details in responses); default true. */
  dev?: boolean;
}

/** A running app in a temporary folder: requests without sockets, and its log. */
export interface TestApp {
  readonly app: App;
  readonly logger: CaptureLogger;
  /** Runs one request through the app as the server would (Fastify's `inject`). */
  inject(request: InjectRequest): Promise<InjectResponse>;
  /** Stops the app and removes its folder. */
  close(): Promise<void>;
}

/** Writes the files to a temporary folder and loads the app there; throws DiagnosticError when it does not compile. */
export async function testApp(options: TestAppOptions): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-test-app-'));
  try {
    for (const [path, text] of Object.entries(options.files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    if (options.config !== undefined) writeFileSync(join(dir, 'rvm.config.json'), JSON.stringify(options.config));
    const logger = captureLogger();
    const app = await loadApp(dir, { cache: false, dev: options.dev ?? true, logger, plugins: options.plugins });
    return {
      app,
      logger,
      inject: (request) => inject(app, request),
      async close() {
        await app.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
