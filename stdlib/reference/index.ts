/**
 * The `reference` plugin: the API reference at /_app/rest-api (the page: ./page.ts), its
 * OpenAPI export (`rest-api/openapi.json`, `rest-api/openapi.yaml`, 3.1 or `?version=3.0`) and
 * the live-reload events — every endpoint behind the production gate of ./access.ts.
 */
import { HTTP, definePlugin, type CallContext, type EndpointFn, type Halt, type PluginApi } from '../../plugins/sdk.js';
import { guarded, referenceAccess } from './access.js';
import { eventsEndpoint } from './events.js';
import { renderedSpec, type OpenApiFormat } from './openapi-cache.js';
import { answerWithEtag } from './etag.js';
import type { OpenApiVersion } from './openapi.js';
import { registerPage } from './page.js';

/** `?version=` values the export accepts. */
const VERSIONS: Readonly<Record<string, OpenApiVersion>> = { '3.1': '3.1', '3.1.0': '3.1', '3.0': '3.0', '3.0.3': '3.0' };

/** The answer of `openapi.json` / `openapi.yaml`: cached text, ETag, 304 when the client has it. */
function specEndpoint(format: OpenApiFormat): EndpointFn {
  return (ctx, app): Halt => {
    const version = requestedVersion(ctx);
    if (version === null) return ctx.fail(HTTP.unsupported_openapi_version.status, 'version must be 3.1 or 3.0', HTTP.unsupported_openapi_version.code);
    const spec = renderedSpec(app, version, format);
    return answerWithEtag(ctx, spec.text, spec.etag, spec.contentType, 'no-cache');
  };
}

function requestedVersion(ctx: CallContext): OpenApiVersion | null {
  const raw = ctx.request.query.version;
  if (raw === undefined) return '3.1';
  return typeof raw === 'string' ? (VERSIONS[raw] ?? null) : null;
}

/** The standard `reference` plugin. */
export const reference = definePlugin({
  name: 'reference',
  version: '1.0.0',
  setup(rvm) {
    const access = referenceAccess(rvm.app);
    // Every endpoint, the page's too, goes through the same gate.
    const gated: PluginApi = {
      app: rvm.app,
      native: (name, fn, meta) => rvm.native(name, fn, meta),
      guard: (name, fn, meta) => rvm.guard(name, fn, meta),
      validator: (name, spec) => rvm.validator(name, spec),
      endpoint: (path, fn, meta) => rvm.endpoint(path, guarded(fn, access), meta),
      records: (provider) => rvm.records(provider),
      announce: (label, text) => rvm.announce(label, text),
      storedRecords: rvm.storedRecords,
    };
    gated.endpoint('rest-api/openapi.json', specEndpoint('json'), { doc: 'The OpenAPI 3.1 document of the app (?version=3.0 for 3.0).' });
    gated.endpoint('rest-api/openapi.yaml', specEndpoint('yaml'), { doc: 'The OpenAPI document as YAML (?version=3.0 for 3.0).' });
    gated.endpoint('rest-api/events', eventsEndpoint, { doc: 'Server-sent events: `reload` after every reload attempt.' });
    registerPage(gated);
  },
});
