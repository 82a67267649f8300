/**
 * A stand-in AppHandle for the transport tests: routes are JS functions that answer through the
 * context (`ctx.respond`, `ctx.fail`) the way natives and the VM will.
 */
import { performance } from 'node:perf_hooks';
import type { PathSegment } from '../../../vm/lang.js';
import type { RouteMeta } from '../../../vm/bytecode/module.js';
import type { AppSettings } from '../../../plugins/sdk.js';
import type { RequestContext } from '../../../vm/runtime/context.js';
import { captureLogger, type CaptureLogger } from '../../../vm/runtime/log.js';
import { createRouter } from '../../../vm/runtime/router.js';
import { createInProcessStore } from '../../../vm/runtime/stores/memory.js';
import type { IncomingRequest, OutgoingResponse, RouteTarget } from '../../../vm/runtime/types.js';
import type { AppHandle } from '../../../vm/runtime/app-handle.js';
import { createSecretSource } from '../../../vm/runtime/secrets.js';
import { DEFAULT_BODY_LIMIT } from '../../../vm/runtime/limits.js';
import { DEFAULT_LIMITS } from '../../../vm/runtime/limits.js';
import { NO_OUTBOUND } from '../../../vm/runtime/config.js';
import { Admission } from '../../../vm/runtime/http/admission.js';
import { Watchdog } from '../../../vm/runtime/watchdog.js';
import { HALT } from '../../../plugins/sdk.js';

export type FakeHandler = (ctx: RequestContext) => void | Promise<void>;

/** `/users/:id/*rest` → segments. */
export function segments(path: string): PathSegment[] {
  return path
    .split('/')
    .filter((s) => s !== '')
    .map((s) =>
      s.startsWith(':') ? { kind: 'param', value: s.slice(1) } : s.startsWith('*') ? { kind: 'wildcard', value: s.slice(1) } : { kind: 'static', value: s },
    );
}

export function settings(over: Partial<AppSettings> = {}): AppSettings {
  return {
    dir: null,
    dev: false,
    bodyLimit: DEFAULT_BODY_LIMIT,
    trustProxy: false,
    limits: DEFAULT_LIMITS,
    outbound: NO_OUTBOUND,
    config: {},
    secrets: createSecretSource(null, {}),
    workers: 1,
    ...over,
  };
}

export interface FakeApp extends AppHandle {
  readonly log: CaptureLogger;
  readyCalls: number;
}

export function fakeApp(
  routes: Array<[string, string, FakeHandler]>,
  options: {
    settings?: Partial<AppSettings>;
    ready?: () => void | Promise<void>;
    builtin?: (req: IncomingRequest, path: string) => OutgoingResponse | Promise<OutgoingResponse> | null;
  } = {},
): FakeApp {
  const router = createRouter<RouteTarget>();
  const handlers: FakeHandler[] = [];
  for (const [method, path, handler] of routes) {
    const target: RouteTarget = {
      meta: { method, path, guards: [] } as unknown as RouteMeta,
      file: 'fake.rvm',
      chunk: handlers.length,
      middleware: [],
      guards: [],
      responses: () => [],
      natives: () => [],
      middlewareInfo: () => [],
    };
    handlers.push(handler);
    router.add(method, segments(path), target);
  }
  const appSettings = settings(options.settings);
  const app: FakeApp = {
    settings: appSettings,
    admission: new Admission(appSettings.limits),
    watchdog: new Watchdog(() => performance.now()),
    store: createInProcessStore(),
    log: captureLogger(),
    router,
    rootMiddleware: [],
    readyCalls: 0,
    ready() {
      app.readyCalls++;
      return options.ready?.();
    },
    builtin: options.builtin ?? (() => null),
    /** Reads the body first, as a route's READ_BODY does after its guards. */
    execute(ctx, target) {
      const read = ctx.readBody();
      if (read === HALT) return;
      if (read instanceof Promise) return read.then((r) => (r === HALT ? undefined : handlers[target.chunk](ctx)));
      return handlers[target.chunk](ctx);
    },
    /** No middleware: the answer alone. */
    around(_ctx, _chain, answer) {
      answer();
    },
  };
  return app;
}
