/**
 * The OpenAPI renderings an app serves (3.1/3.0 × JSON/YAML), each built once per reload
 * generation and kept with its ETag until a file changes.
 */
import { createHash } from 'node:crypto';
import type { AppIntrospection } from '../../plugins/sdk.js';
import { buildOpenApi, type OpenApiDocument, type OpenApiVersion } from './openapi.js';
import { toYaml } from './yaml.js';

export type OpenApiFormat = 'json' | 'yaml';

/** One rendering as served. */
export interface RenderedSpec {
  text: string;
  /** Strong validator: a quoted hash of `text`. */
  etag: string;
  contentType: string;
}

const CONTENT_TYPES: Readonly<Record<OpenApiFormat, string>> = {
  json: 'application/json; charset=utf-8',
  // RFC 9512 registers application/yaml.
  yaml: 'application/yaml; charset=utf-8',
};

/** The ETag is a cache validator, not a security token: SHA-1 is collision-resistant enough and twice as fast. */
const ETAG_HASH = 'sha1';

interface Entry {
  generation: number;
  documents: Map<OpenApiVersion, OpenApiDocument>;
  texts: Map<string, RenderedSpec>;
}

/**
 * Per app (the introspection object outlives the plugin instances a reload sets up again), so a
 * reload that fails to compile still bumps the generation and a clean one is served from cache.
 */
const CACHE = new WeakMap<AppIntrospection, Entry>();

/** The rendering of `app`'s document in `version` and `format`, from cache when nothing changed. */
export function renderedSpec(app: AppIntrospection, version: OpenApiVersion, format: OpenApiFormat): RenderedSpec {
  let entry = CACHE.get(app);
  if (entry === undefined || entry.generation !== app.generation) {
    entry = { generation: app.generation, documents: new Map(), texts: new Map() };
    CACHE.set(app, entry);
  }
  const key = `${version} ${format}`;
  const cached = entry.texts.get(key);
  if (cached !== undefined) return cached;
  let doc = entry.documents.get(version);
  if (doc === undefined) {
    doc = buildOpenApi(app, { version });
    entry.documents.set(version, doc);
  }
  // Compact JSON: a quarter the bytes of indented text, and browsers indent it themselves.
  const text = format === 'json' ? JSON.stringify(doc) : toYaml(doc);
  // A hash of the text, not the generation: a reload that changes nothing keeps the ETag (304s).
  const rendered = { text, etag: `"${createHash(ETAG_HASH).update(text).digest('base64url')}"`, contentType: CONTENT_TYPES[format] };
  entry.texts.set(key, rendered);
  return rendered;
}
