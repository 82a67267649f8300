/**
 * Holds an app to its own OpenAPI document: the answers a test obtains are recorded,
 * and at the end each must be documented — its route's operation, its status, its media type —
 * and a JSON body must validate (ajv, formats checked) against the document's schema for it. A
 * client generated from the document then accepts what the server really answers.
 */
import assert from 'node:assert/strict';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { App } from '../../vm/runtime/app.js';
import { inject as injectOnly, type InjectRequest, type InjectResponse } from '../../vm/runtime/http/inject.js';
import { buildOpenApi } from '../../stdlib/reference/openapi.js';
import type { RouteInfo } from '../../plugins/sdk.js';

export type { InjectRequest, InjectResponse };

// ajv-formats is CommonJS: its default export arrives as the module object under NodeNext.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void;

/** One answer as the client saw it. */
export interface RecordedAnswer {
  method: string;
  /** The request target: path and query. */
  url: string;
  status: number;
  /** The `content-type` header, or undefined. */
  contentType: string | undefined;
  body: string;
}

type Doc = Record<string, any>;

/** A route of the app and the paths it matches (`:param` one segment, `*rest` the rest). */
interface RoutePattern {
  route: RouteInfo;
  pattern: RegExp;
  /** Params and wildcards: the fewer, the more specific (the router prefers static segments). */
  dynamic: number;
}

/** Records answers and checks them against the app's OpenAPI 3.1 document. */
export class AnswerLog {
  readonly answers: RecordedAnswer[] = [];

  /** `inject` that records the answer. */
  async inject(app: App, req: InjectRequest): Promise<InjectResponse> {
    const res = await injectOnly(app, req);
    this.record(req.method ?? 'GET', req.url, res);
    return res;
  }

  record(method: string, url: string, res: { status: number; headers: Record<string, string | string[] | undefined>; body: string }): void {
    const type = res.headers['content-type'];
    this.answers.push({ method: method.toUpperCase(), url, status: res.status, contentType: Array.isArray(type) ? type[0] : type, body: res.body });
  }

  /** What does not match the document, one line per answer; answers to paths no route serves are not judged. */
  problems(app: App): string[] {
    const doc = buildOpenApi(app.introspection, { version: '3.1' }) as Doc;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    // Components under their own ids, so `$ref`s resolve without the rest of the document.
    const rewrite = (schema: unknown): object => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"urn:rvm:schema:')) as object;
    for (const [name, schema] of Object.entries((doc.components?.schemas ?? {}) as Doc)) ajv.addSchema({ ...rewrite(schema), $id: `urn:rvm:schema:${name}` });
    const validators = new Map<object, ValidateFunction>();
    const patterns = app.introspection.routes().map(routePattern);
    const out: string[] = [];
    for (const answer of this.answers) {
      const problem = this.judge(answer, doc, patterns, (schema) => {
        let validate = validators.get(schema);
        if (validate === undefined) validators.set(schema, (validate = ajv.compile(rewrite(schema))));
        return validate;
      });
      if (problem !== null) out.push(`${answer.method} ${answer.url} → ${answer.status} ${answer.contentType ?? '(no type)'}: ${problem}`);
    }
    return out;
  }

  /** Fails with every answer the document does not describe. */
  assertMatchDocument(app: App): void {
    assert.ok(this.answers.length > 0, 'no answer was recorded');
    const problems = this.problems(app);
    if (problems.length > 0) assert.fail(`${problems.length} of ${this.answers.length} answers do not match the OpenAPI document:\n${problems.join('\n')}`);
  }

  /** Each answer with the document path of the route that made it (null for paths no route serves). */
  located(app: App): { answer: RecordedAnswer; path: string | null; method: string }[] {
    const patterns = app.introspection.routes().map(routePattern);
    return this.answers.map((answer) => {
      const method = answer.method === 'HEAD' ? 'GET' : answer.method;
      return { answer, path: routeOf(patterns, method, answer.url)?.openapiPath ?? null, method };
    });
  }

  private judge(answer: RecordedAnswer, doc: Doc, patterns: readonly RoutePattern[], validator: (schema: object) => ValidateFunction): string | null {
    const method = answer.method === 'HEAD' ? 'GET' : answer.method;
    const route = routeOf(patterns, method, answer.url);
    if (route === undefined) return null;
    const operation = doc.paths?.[route.openapiPath]?.[method.toLowerCase()] as Doc | undefined;
    if (operation === undefined) return `no operation ${method.toLowerCase()} ${route.openapiPath}`;
    const response = (operation.responses?.[String(answer.status)] ?? operation.responses?.default) as Doc | undefined;
    if (response === undefined)
      return `status ${answer.status} is not documented for ${method} ${route.openapiPath} (documented: ${Object.keys(operation.responses ?? {}).join(', ')})`;
    const mediaType = answer.contentType?.split(';')[0].trim().toLowerCase();
    if (answer.body === '' || answer.method === 'HEAD') return null;
    if (mediaType === undefined) return 'a body without a content-type';
    const media = (response.content?.[mediaType] ?? response.content?.['*/*']) as Doc | undefined;
    if (media === undefined) return `media type ${mediaType} is not documented (documented: ${Object.keys(response.content ?? {}).join(', ') || 'none'})`;
    if (media.schema === undefined) return null;
    const value: unknown = mediaType === 'application/json' || mediaType.endsWith('+json') ? JSON.parse(answer.body) : answer.body;
    const validate = validator(media.schema as object);
    if (validate(value)) return null;
    return `${(validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ')} — body ${answer.body.slice(0, 300)}`;
  }
}

/** The route serving `method url`: of those matching, the one with the fewest dynamic segments. */
function routeOf(patterns: readonly RoutePattern[], method: string, url: string): RouteInfo | undefined {
  const path = url.split('?')[0]!;
  return patterns.filter((p) => (p.route.method === method || p.route.method === 'ANY') && p.pattern.test(path)).sort((a, b) => a.dynamic - b.dynamic)[0]
    ?.route;
}

function routePattern(route: RouteInfo): RoutePattern {
  let dynamic = 0;
  const source = route.path
    .split('/')
    .map((segment) => {
      if (segment.startsWith(':')) {
        dynamic += 1;
        return '[^/]+';
      }
      if (segment.startsWith('*')) {
        dynamic += 100;
        return '.*';
      }
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return { route, pattern: new RegExp(`^${source === '' ? '/' : source}/?$`), dynamic };
}

/** The answers this test process obtained through `inject` below. */
export const answerLog = new AnswerLog();

/** vm/runtime/http/inject's `inject`, its answer recorded in `answerLog`. */
export function inject(app: App, req: InjectRequest): Promise<InjectResponse> {
  return answerLog.inject(app, req);
}
