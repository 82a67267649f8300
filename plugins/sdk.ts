/**
 * The plugin SDK: the only API the standard library and third-party plugins use. A facade: the
 * contract (plugins/contract.ts) plus the helpers plugin authors use: values, cookies, addresses,
 * dates, and the kit's argument checks (plugins/kit/).
 *
 *     export default definePlugin({
 *       name: 'greetings', version: '1.0.0',
 *       setup(rvm) {
 *         rvm.native('greet', (ctx, name) => `hello ${toText(name)}`, {
 *           params: [{ name: 'name', type: 'text' }], returns: 'text', doc: 'A greeting.' });
 *       },
 *     });
 */
import type { PluginDefinition } from './contract.js';

export * from './contract.js';
export {
  HostObject,
  RvmError,
  SecretText,
  revealText,
  MAX_TEXT_LENGTH,
  MAX_LIST_LENGTH,
  codePointLength,
  isTruthy,
  toText,
  typeName,
  valuesEqual,
  fromJson,
  getField,
  setField,
  intFromText,
  numberFromText,
} from '../vm/values.js';
export type { Value, ValueObject } from '../vm/values.js';
export { CPU_BUDGET_MS, TIME_SLICE_MS, FUEL_BUDGET, CHARS_PER_UNIT, UNITS_PER_ITEM } from '../vm/interp/budget.js';
export type { Budget, BudgetOptions } from '../vm/interp/budget.js';
export { UploadedFile } from '../vm/runtime/http/upload.js';
export type { Constant, FieldType, Literal } from '../vm/lang.js';
export { didYouMean } from '../vm/diagnostics.js';
export { onFirstUse } from '../vm/on-first-use.js';
export { OutageLog, type OutageLines, type OutageLogTarget } from '../vm/runtime/stores/unavailable.js';
export type { JsonSchema } from '../vm/bytecode/module.js';

/** Declares a plugin; the identity function, there for its types. */
export function definePlugin(definition: PluginDefinition): PluginDefinition {
  return definition;
}
export { serializeCookie, setCookie } from '../vm/runtime/http/cookies.js';
export type { CookieOptions } from '../vm/runtime/http/cookies.js';
export { IMAGE_TYPES, DOCUMENT_TYPES, sniffMime } from '../vm/runtime/http/sniff.js';
export { uploadedFromBytes } from '../vm/runtime/http/upload.js';
export { UnreadableFileError, readRegularFile } from '../vm/regular-file.js';
export { encodeLogText } from '../vm/runtime/log.js';
export { constantTimeEqual, signText } from '../vm/runtime/secrets.js';
export { canonicalIp, cidrContains, formatIp, isIpv4, parseCidr, parseIp } from '../vm/runtime/http/client-address.js';
export type { CidrRange, IpWords, TrustProxy } from '../vm/runtime/http/client-address.js';
export { normalizeOrigin } from './kit/origin.js';
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
  isPlainObject,
  typeError,
} from './kit/args.js';
export { clientPrefix } from './kit/client-prefix.js';
export { SESSION_COOKIE, bearerToken, requestToken } from './kit/session-token.js';
export { andThen, answerOf, type Answer } from './kit/answer.js';
export { defaultErrorCode, defaultErrorMessage } from '../vm/runtime/response.js';
export { unstorableText } from '../vm/runtime/validate.js';
export { HTTP, RUNTIME, type HttpErrorEntry } from '../vm/errors.js';
export { RESPONSE_HELPERS, VALIDATION_ERROR_SCHEMA } from '../vm/compiler/infer.js';
export {
  RECORD_TYPE_KEYWORD,
  SCHEMA_LISTS,
  SCHEMA_VALUED,
  isObject,
  objectSchema,
  orNull,
  storedFieldSchema,
  walkSchema,
} from '../vm/compiler/field-schema.js';
export { DAY_MS, MAX_INSTANT, MIN_INSTANT, dateInstant, datetimeInstant, formatDate, formatDatetime, instantOf, isDate, isDatetime } from '../vm/calendar.js';
