/**
 * The runtime's own natives: those that drive the request pipeline instead of computing a value.
 * They are the host's, not a library's, so every app loads them first whatever plugins the
 * composition root chooses; `next()` is one, as only the runtime knows the middleware chain.
 */
import type { CallContext } from '../host/context.js';
import type { PluginDefinition } from '../host/plugin.js';
import type { Value } from '../values.js';
import { COMPILER_VERSION } from '../lang.js';
import type { RequestContext } from './context.js';

/** The plugin name the runtime's natives are listed under (`rvm natives`, spec/natives.md). */
export const RUNTIME_PLUGIN_NAME = 'runtime';

/** The plugin of the runtime's own natives; its version is the runtime's. */
export const RUNTIME_PLUGIN: PluginDefinition = {
  name: RUNTIME_PLUGIN_NAME,
  version: COMPILER_VERSION,
  setup(rvm) {
    // Natives run with the runtime's own context: the pipeline set its middleware chain there.
    rvm.native('next', (ctx: CallContext): Value | Promise<Value> => (ctx as RequestContext).next(), {
      params: [],
      returns: 'null',
      doc: 'Runs the rest of the chain (inner middleware, guards, validation, handler) and returns once it has answered; statements after it see response.status and may still change headers.',
      scope: 'middleware',
    });
  },
};
