/**
 * The plugin SDK (`rvm-runtime/sdk`): the only API the standard library and third-party plugins
 * use. A curated facade over the host contract the VM owns (vm/host/) and the helpers plugin
 * authors use: values, errors, argument checks, cookies, addresses, dates, JSON Schema. Its whole
 * surface is pinned in plugins/sdk-surface.txt (test/plugins/sdk-surface.test.ts): a change to
 * the public SDK shows in a diff of that one file.
 *
 *     export default definePlugin({
 *       name: 'greetings', version: '1.0.0',
 *       setup(rvm) {
 *         rvm.native('greet', (ctx, name) => `hello ${toText(name)}`, {
 *           params: [{ name: 'name', type: 'text' }], returns: 'text', doc: 'A greeting.' });
 *       },
 *     });
 */
import type { PluginDefinition } from '../vm/host/plugin.js';

// The host contract (vm/host/), by concern.
export { HALT } from '../vm/host/context.js';
export type {
  AppSettings,
  BodyKind,
  CallContext,
  Halt,
  Limits,
  NativeBudget,
  OutboundSettings,
  RequestInfo,
  RequestOrigin,
  ResponseDraft,
  ResponseStream,
  SecretSource,
} from '../vm/host/context.js';
export type {
  CheckedNativeFn,
  ErrorResponseSpec,
  GuardFn,
  GuardMeta,
  GuardUse,
  NativeArgs,
  NativeFn,
  NativeMeta,
  ParamSpec,
  ParamType,
  ParamValue,
  ParamValues,
  SecuritySchemeSpec,
} from '../vm/host/natives.js';
export type { Arbitrary, ArgsProblem, Bounds, FastCheck, FileSample, ValidatorSpec } from '../vm/host/validators.js';
export { SECURITY_KEY_PREFIX } from '../vm/host/stores.js';
export type { KeyValueStore, WindowResult } from '../vm/host/stores.js';
export { RawRequestArg, UNKNOWN } from '../vm/host/records.js';
export type {
  FieldProblem,
  KnownArg,
  RecordCallProblem,
  RecordField,
  RecordMethod,
  RecordProvider,
  RecordStartProblem,
  RecordType,
  StoredRecords,
} from '../vm/host/records.js';
export type {
  AppIntrospection,
  CalledNativeInfo,
  DecoratorInfo,
  DiagnosticInfo,
  EndpointFn,
  EndpointMeta,
  FieldInfo,
  GuardInfo,
  MiddlewareInfo,
  ResponseInfo,
  RouteInfo,
  TypeInfo,
} from '../vm/host/introspection.js';
export type { PluginApi, PluginDefinition } from '../vm/host/plugin.js';

/** Declares a plugin; the identity function, there for its types. */
export function definePlugin(definition: PluginDefinition): PluginDefinition {
  return definition;
}

// Values of the language, and its errors.
export {
  HostObject,
  Lambda,
  MAX_LIST_LENGTH,
  MAX_TEXT_LENGTH,
  RvmError,
  SecretText,
  codePointLength,
  fromJson,
  getField,
  intFromText,
  isTruthy,
  numberFromText,
  revealText,
  setField,
  toText,
  typeName,
  valuesEqual,
} from '../vm/values.js';
export type { Value, ValueObject } from '../vm/values.js';
export type { Constant, FieldType, Literal } from '../vm/lang.js';
export { HTTP, RUNTIME, type HttpErrorEntry } from '../vm/errors.js';
export { defaultErrorCode } from '../vm/runtime/response.js';
export { didYouMean } from '../vm/diagnostics.js';

// Arguments: checks that answer the language's own errors.
export {
  absent,
  argumentProblem,
  checkLength,
  entriesOf,
  expectBool,
  expectInt,
  expectList,
  expectNumber,
  expectText,
  expectTextLike,
  isPlainObject,
  isTextLike,
  keepSecret,
  typeError,
} from '../vm/host/args.js';
export { MAX_JSON_VALUE_DEPTH, parseJsonValue } from '../vm/host/json.js';

// Requests and answers: uploads, cookies, tokens, origins, client addresses.
export { UploadedFile, uploadedFromBytes } from '../vm/runtime/http/upload.js';
export { DOCUMENT_TYPES, IMAGE_TYPES } from '../vm/runtime/http/sniff.js';
export { setCookie, type CookieOptions } from '../vm/runtime/http/cookies.js';
export { SESSION_COOKIE, bearerToken, requestToken } from './kit/session-token.js';
export { normalizeOrigin } from './kit/origin.js';
export { parseQuery } from '../vm/runtime/request-view.js';
export { canonicalIp, cidrContains, formatIp, isIpv4, nonPublicGroup, parseCidr, parseIp } from '../vm/runtime/http/client-address.js';
export type { CidrRange, IpWords, TrustProxy } from '../vm/runtime/http/client-address.js';
export { allowsAddress, allowsHost, compileOutboundAllow, type OutboundAllow } from '../vm/runtime/http/outbound-allow.js';
export { isHeaderName, isHeaderValue } from '../vm/runtime/http/header-syntax.js';
export { clientPrefix } from './kit/client-prefix.js';

// Secrets, logs, outages and heavy dependencies.
export { constantTimeEqual, signText } from '../vm/runtime/secrets.js';
export { decodeBase64, strictUtf8 } from './kit/base64.js';
export { encodeLogText } from '../vm/runtime/log.js';
export { OutageLog, type OutageLines } from '../vm/runtime/stores/unavailable.js';
export { OVERLOADED_RETRY_AFTER_S } from '../vm/runtime/http/admission.js';
export { onFirstUse } from '../vm/on-first-use.js';
export { MAX_PATTERN_LENGTH, MAX_PATTERN_PROGRAM_SIZE, compilePattern, isPatternProblem, type Pattern } from './kit/pattern.js';
export { readCapped } from './kit/capped-answer.js';
export { unstorableText } from '../vm/runtime/validate.js';

// Dates and times, as the language's `date` and `datetime` fields hold them.
export { DAY_MS, MAX_INSTANT, MIN_INSTANT, dateInstant, daysIn, formatDate, formatDatetime, instantOf, isDate, isDatetime } from '../vm/calendar.js';

// JSON Schema, as the API reference documents fields, records and answers.
export type { JsonSchema } from '../vm/bytecode/module.js';
export { RESPONSE_HELPERS, VALIDATION_ERROR_SCHEMA } from '../vm/compiler/infer.js';
export { RECORD_TYPE_KEYWORD, SCHEMA_LISTS, SCHEMA_VALUED, isObject, objectSchema, storedFieldSchema, walkSchema } from '../vm/compiler/field-schema.js';
