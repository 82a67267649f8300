/**
 * A minimal CallContext for plugin tests: a recording response draft, respond/fail that record
 * what they got, and a log that collects lines. No sockets, no VM.
 */
import { HALT } from '../../plugins/sdk.js';
import type { AppSettings, BodyKind, CallContext, Halt, RequestInfo, ResponseDraft, Value } from '../../plugins/sdk.js';
import { Budget } from '../../vm/interp/budget.js';
import { createSecretSource } from '../../vm/runtime/secrets.js';
import { DEFAULT_LIMITS } from '../../vm/runtime/limits.js';
import { defaultErrorCode, defaultErrorMessage } from '../../vm/runtime/response.js';

export interface FakeContext extends CallContext {
  readonly logs: string[];
  readonly answers: { status: number; body: Value; kind: BodyKind }[];
  readonly failures: { status: number; message: string; code?: string; headers?: Record<string, string> }[];
  /** What guards left for after the body is read (`afterBody`), in order. */
  readonly bodyChecks: ((ctx: CallContext) => void | Halt)[];
}

/** Settings of an app loaded from nowhere, in dev mode. */
export const TEST_APP: AppSettings = { dir: null, dev: true, bodyLimit: 1024 * 1024, trustProxy: false, limits: DEFAULT_LIMITS, config: {}, secrets: createSecretSource(null, {}) };

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

/** Builds a context for a GET / request, overriding request fields as given. */
export function fakeContext(options: { request?: Partial<RequestInfo>; next?: () => Value | Promise<Value> } = {}): FakeContext {
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
  const store = new Map<string, Value>();
  const respond = (status: number, body: Value, kind: BodyKind = 'json'): Halt => {
    answers.push({ status, body, kind });
    response.status = status;
    response.body = body;
    response.kind = kind;
    response.answered = true;
    return HALT;
  };
  return {
    request,
    response,
    app: TEST_APP,
    budget: new Budget(),
    store: {
      get: (key) => store.get(key),
      set: (key, value) => void store.set(key, value),
      delete: (key) => void store.delete(key),
    },
    locals: new Map(),
    logs,
    answers,
    failures,
    log: (message) => void logs.push(message),
    bodyChecks,
    afterBody: (check) => void bodyChecks.push(check),
    respond,
    fail(status, message, code, headers) {
      failures.push({ status, message: message ?? defaultErrorMessage(status), code, headers });
      for (const [name, value] of Object.entries(headers ?? {})) response.setHeader(name, value);
      return respond(status, { error: message ?? defaultErrorMessage(status), code: code ?? defaultErrorCode(status) }, 'json');
    },
    next: options.next ?? (() => {
      throw new Error('next() called outside middleware');
    }),
    stream() {
      throw new Error('stream() is for built-in endpoints; test it through a real app');
    },
  };
}
