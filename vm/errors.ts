/**
 * The error catalogue: every code rvm reports, defined once (Fastify's `errors.js` is the model).
 * Compile-time diagnostics (`E_…`, and the `W_…` warning), artefact and plugin load codes, the
 * runtime error codes a request can fail with, and the HTTP error codes of `{"error", "code"}`
 * bodies with their status and default message. Call sites name an entry instead of writing the
 * code; the code tables of `spec/errors.md` are generated from the entries (tools/gen-errors-doc.ts);
 * the CLI asks `isUserFacingCode` which errors are addressed to the user.
 */

/** The family of a code, which decides how it is reported (spec/errors.md has one section each). */
export type ErrorFamily = 'diagnostic' | 'artefact' | 'plugin' | 'runtime' | 'http';

/** One code of the catalogue; `doc` is what spec/errors.md says of it. */
export interface ErrorEntry {
  readonly code: string;
  readonly family: ErrorFamily;
  readonly doc: string;
  /** Diagnostics: the `###` section of spec/errors.md that lists the code. */
  readonly section?: string;
  /** Diagnostics: a source that raises it, as the page shows it (Markdown). */
  readonly example?: string;
}

/** An HTTP error code: the status it answers and the message its body carries when none is given. */
export interface HttpErrorEntry extends ErrorEntry {
  readonly family: 'http';
  readonly status: number;
  readonly message: string;
}

/** What spec/errors.md says of a compile-time diagnostic and, where one helps, a source that raises it. */
interface DiagnosticDoc {
  readonly doc: string;
  readonly example?: string;
}

/** Lexical diagnostics: text the lexer cannot turn into tokens. */
const LEXICAL = {
  E_UNEXPECTED_CHAR: { doc: 'a character that starts no token', example: '`x = 1 # 2`' },
  E_UNTERMINATED_STRING: { doc: 'a text without its closing quote on the same line (also an unclosed `${`), or a multi-line text without its closing `"""` or `\'\'\'`', example: '`x = \'abc`' },
  E_BAD_ESCAPE: { doc: 'an escape other than `\\n \\t \\r \\0 \\\\ \\\' \\" \\$`', example: '`\'a\\qb\'`' },
  E_UNTERMINATED_COMMENT: { doc: '`/*` without `*/`', example: '`/* never closed`' },
} as const satisfies Record<string, DiagnosticDoc>;

/** Syntax diagnostics: tokens the grammar does not allow. */
const SYNTAX = {
  E_UNEXPECTED_TOKEN: { doc: 'a token the grammar does not allow here (also a missing `}` at the end of the file, a path without `/`)', example: '`x = 1 2`, `route GET users {`' },
  E_EXPECTED_EXPRESSION: { doc: 'an expression was expected (also a reserved word used as a name)', example: '`x = * 2`, `while = 1`' },
  E_INVALID_ASSIGN: { doc: 'the left side of `=` is not a name, field or index', example: '`1 = 2`, `len(x) = 2`' },
  E_BAD_METHOD: { doc: 'not an HTTP method of `GET POST PUT PATCH DELETE HEAD OPTIONS ANY` (or not in capitals)', example: '`route FETCH / {`' },
  E_BAD_PATH: { doc: 'a malformed route path: trailing `/`, empty or dot segment, bad character, `{name}`, bad or duplicate parameter, wildcard not last', example: '`route GET /users/ {`' },
  E_UNKNOWN_TYPE: { doc: 'a field type outside `text int number bool file list object date datetime`', example: '`name: txt`' },
  E_SECTION_ORDER: { doc: 'route sections out of order (guards, then validate/query, then the handler), a section twice, or a section word inside the handler', example: '`validate {…}` then `guard g`' },
  E_DUPLICATE_FIELD: { doc: 'a field declared twice in one `validate`, `query` or `type` block', example: '`name: text` twice' },
  E_MIDDLEWARE_FILE: { doc: '`middleware {}` outside a file named `_middleware.rvm`, or a route inside one', example: '`middleware {}` in `routes.rvm`' },
  E_DUPLICATE_MIDDLEWARE: { doc: 'a second `middleware {}` block in one `_middleware.rvm`' },
  E_TOO_DEEP: { doc: 'expressions or blocks nested deeper than `MAX_NESTING_DEPTH` (256), or a decorator\'s list or object literal nested deeper than `MAX_CONSTANT_DEPTH` (32)', example: '300 nested `(`, `@default([[[…]]])` 33 deep' },
  E_TOO_MANY_ERRORS: { doc: 'the parser stopped after `MAX_DIAGNOSTICS` (50) errors in one file' },
  E_FILE_TOO_LARGE: { doc: 'a source file over `MAX_SOURCE_BYTES` (1 MiB)' },
  E_INTERNAL: { doc: 'the parser itself failed on this file (an rvm bug: please report it with the file)' },
  E_LAMBDA_ASSIGN: { doc: 'a lambda followed by `=`: a lambda is one expression, and the enclosing locals it reads are copies taken when it was made, so it cannot assign them (nor any variable)', example: '`map(xs, x => total = total + x)`' },
} as const satisfies Record<string, DiagnosticDoc>;

/** Name and compilation diagnostics, found file by file. */
const NAMES = {
  E_UNDEFINED_NAME: { doc: 'a name that is no local, parameter or runtime value here (out of its block, a caller\'s local), a name in capitals no file declares as a `const` (found at link), or the target of `+=` before any value', example: '`log(nope)`, `count += 1` first' },
  E_ASSIGN_AMBIENT: { doc: 'assigning `request`, `body`, `params`, `query`, `response` or `state` (its fields may be set), or a field of `request`, `params` or `query` at any depth (they hold what the client sent)', example: '`body = {}`, `query.page = 2`, `state = {}`' },
  E_NOT_A_VALUE: { doc: 'a function or guard name used as a value', example: '`x = helper`' },
  E_NOT_CALLABLE: { doc: 'calling something that is not a function name or `Name.method`', example: '`n = 1; n()`' },
  E_NOT_CONSTANT: { doc: 'a `const` whose value is not a constant number, text, bool or null (literals, operators and the constants above it in its file), or a guard or decorator argument that is not a constant (a decorator\'s list or object literal must hold constants only; the caret is at the first item that is not)', example: '`guard from_ip(request.ip)`, `@default([request.ip])`' },
  E_DUPLICATE_PARAM: { doc: 'two parameters with the same name', example: '`fn f(a, a)`' },
  E_DUPLICATE_DECL: { doc: 'the same `fn`, `guard_definition` or `type` name twice in one file (also a route or middleware block repeated in one file)', example: 'two `fn twice()`' },
  E_BREAK_OUTSIDE_LOOP: { doc: '`break` or `continue` outside a loop', example: '`break` in a route' },
  E_TRANSACTION: { doc: 'a `transaction {}` block nested in another, left by `return`, `break` or `continue`, or holding an answer (`response {}`, `response.*()`) that would be sent before it commits', example: '`transaction { response.ok(1) }`' },
  E_CONST: { doc: 'a `const` whose name is not written in capitals, or a name in capitals assigned (a constant, or a variable spelled like one; spec/language.md §3.6)', example: '`const max = 3`, `MAX_ITEMS = 5` in a route' },
  E_THROW_CODE: { doc: 'a `throw` whose code is a constant that is not a snake_case text of at most 64 characters, or is one the runtime reserves (the limits, `client_gone`, `deadline_exceeded`, `store_unavailable`, `store_full`; spec/language.md §6.2)', example: "`throw 'Out of stock'`, `throw 'fuel_exhausted'`" },
  E_RETURN_OUTSIDE_FN: { doc: '`return` outside a `fn` or `guard_definition`', example: '`return 1` in a route' },
  E_RETURNS_TAG: { doc: 'a malformed `@returns` tag in a route\'s doc comment: no status or one outside 100–599, a schema that does not parse, one nested deeper than `MAX_CONSTANT_DEPTH` (32), a status declared twice, or a type name no file of the app declares (checked once every file is compiled) (spec/language.md §2)', example: '`/// @returns 200 {id: text`, `/// @returns ok Task`' },
  E_BAD_RESPONSE_FIELD: { doc: 'a `response {}` field other than `status json text html headers`, or two body fields', example: '`response { stats: 200 }`' },
  E_UNKNOWN_FIELD_TYPE: { doc: 'a field type the compiler does not know (the parser normally reports `E_UNKNOWN_TYPE` first)' },
  E_TOO_MANY_LOCALS: { doc: 'more than `MAX_LOCALS` (256) locals live at once in one chunk', example: '257 assignments' },
  E_TOO_MANY_CONSTANTS: { doc: 'more than `MAX_CONSTANTS` (65 536) constants in one chunk' },
  E_TOO_MANY_ARGS: { doc: 'more than `MAX_ARGS` (255) arguments in a call or parameters in a declaration', example: '`max(1, 1, …)` × 256' },
  E_LAMBDA_PLACE: { doc: 'a lambda anywhere but as an argument of a call: it cannot be assigned, returned, put in a list or object, or be an operand', example: '`double = x => x * 2`' },
} as const satisfies Record<string, DiagnosticDoc>;

/** Diagnostics of the whole app: linking, validation plans, configuration. */
const LINKING = {
  E_UNKNOWN_FUNCTION: { doc: 'a call to a function no file declares and no plugin provides; the hint names the nearest one', example: '`lenn(\'abc\')` → did you mean `len`?' },
  E_UNKNOWN_GUARD: { doc: 'a guard no file declares and no plugin provides, with a did-you-mean hint', example: '`guard premium_usr`' },
  E_ARITY: { doc: 'a call or guard use with the wrong number of arguments, or a lambda written in a call with another number of parameters than the native calls it with', example: '`len(\'a\', \'b\')`, `guard min_age`, `reduce(xs, x => x, 0)`' },
  E_RECORD_QUERY: { doc: 'a record method call whose known arguments (constant filters and options, field names of an object literal) name an unknown field, operator, order key or option, or hold a value of the wrong type; a write given the request\'s data as it came (`User.create(request.body)`, or `body` in a route without `validate`); a range, prefix or list on a `@hidden` field, or an order by one; the hint names the nearest visible field, or what to do', example: '`User.where({ emial: \'a\' })` → did you mean `email`?' },
  E_GUARD_ARGS: { doc: 'guard arguments the guard\'s plugin refuses at load (`checkArgs`): a limit out of range, a malformed CIDR, a time that is not `HH:MM`', example: '`guard rate_limit(0, 60)`, `guard ip(\'10.0.0.0/33\')`' },
  E_SCOPE: { doc: 'a native restricted to middleware (`next()`) used elsewhere, including a `fn`', example: '`next()` in a route' },
  E_DUPLICATE_ROUTE: { doc: 'two routes with the same method and path shape, in one file or in two', example: '`route GET /items` in `a.rvm` and `b.rvm`' },
  E_DUPLICATE_NAME: { doc: 'the same top-level name (`fn`, `guard_definition`, `type`, `const`) declared in two files, or a `fn` named like a plugin native; the message names the first place', example: '`fn helper` in two files, `fn len(x)`' },
  E_NO_APP: { doc: 'the app folder or bundle given to `rvm` does not exist', example: '`rvm run nowhere/`' },
  E_APP_EXISTS: { doc: '`rvm new DIR` was given a folder that is not empty, or a file: nothing is written (exit 1), so a second run never overwrites an edit', example: '`rvm new app` twice' },
  E_UNKNOWN_VALIDATOR: { doc: 'a decorator no loaded plugin registers as a validator; the hint names the nearest', example: '`@emial` → did you mean `email`?' },
  E_VALIDATOR_TYPE: { doc: 'a validator on a field type it does not apply to, or a `file` field in `query {}`', example: '`age: int @email`' },
  E_VALIDATOR_ARGS: { doc: 'wrong argument count or type for a validator, or arguments it refuses (a regex that does not compile or that a linear-time engine cannot run — backreferences, lookaround — with a hint; a size that does not parse)', example: '`@min(\'8\')`, `@max_size(\'lots\')`, `@regex(\'(a)\\\\1\')`' },
  E_CONTRADICTORY_BOUNDS: { doc: 'decorators whose bounds exclude every value', example: '`@min(10) @max(5)`' },
  E_BAD_DEFAULT: { doc: 'a `@default` of the wrong type (a list or object literal suits only a `list` or `object` field), or one its own field\'s validators refuse', example: '`role: text @one_of(\'a\', \'b\') @default(\'c\')`, `tags: list @default({})`' },
  W_NOT_CONFIGURED: { doc: 'a warning, not an error: a guard whose plugin needs configuration the app lacks (`auth` or `role` without `JWT_SECRET` or `.secrets/jwt_secret`, `api_key` without keys); `rvm check` and the start of `rvm run` report it once per guard, at its first use, before its requests answer 500', example: '`guard auth` and no key' },
  W_LINK_SKIPPED: { doc: 'a warning, not an error: a symbolic link in the app folder that the search for route files does not follow — a folder link leading outside the app or to a folder that holds it (the walk would loop), or a link leading nowhere; `rvm check` and `rvm run` name it once and go on without it', example: '`app/etc -> /etc`, `app/up -> ..`' },
  E_SCHEMA_WITHHELD: { doc: 'the database holds a record type in a shape rvm will not change by itself at start (a field removed or renamed, a type changed, a new required field without default on a table with rows): the app does not start (a dev reload keeps the previous version); the message says what changed, at the type\'s declaration — run `rvm db diff` to see the SQL and `rvm db apply --allow-destructive` to apply it', example: '`age: int` became `age: text`' },
  E_CONFIG: { doc: '`rvm.config.json` or a config env var is invalid (not JSON, wrong type, bad size, a bad `trustProxy` or `outbound.allow`, the latter at its line), or the file is not a regular file or is over `MAX_CONFIG_BYTES` (1 MiB)', example: '`{"bodyLimit": "huge"}`, `{"trustProxy": 99}`' },
} as const satisfies Record<string, DiagnosticDoc>;

/** The diagnostics by the `###` section of spec/errors.md that lists them, in page order. */
const DIAGNOSTIC_SECTIONS = {
  Lexical: LEXICAL,
  Syntax: SYNTAX,
  'Names and compilation': NAMES,
  'Linking (the whole app)': LINKING,
} as const;

/** Compile-time diagnostics: a source file that cannot be compiled or linked (`W_…` warns). */
const DIAGNOSTIC_DOCS = { ...LEXICAL, ...SYNTAX, ...NAMES, ...LINKING };

/** A cache file or bundle that cannot be loaded. */
const ARTEFACT_DOCS = {
  E_ARTEFACT_CORRUPT: 'truncated, garbage, checksum mismatch, trailing data or structurally invalid',
  E_ARTEFACT_VERSION: 'an rvm artefact of another format version, or a bundle written before bundles recorded their plugins whose config lists plugins (rebuild it with `rvm compile`)',
  E_ARTEFACT_FOREIGN: 'not an rvm artefact of the expected kind (a module where a bundle was expected, or not rvm at all)',
  E_ARTEFACT_UNREADABLE: 'the file could not be read or written, is not a regular file (FIFO, device, directory), or is over its cap (`MAX_BUNDLE_BYTES`, 256 MiB)',
} as const;

/** A plugin that cannot be loaded. */
const PLUGIN_DOCS = {
  E_PLUGIN_NOT_FOUND: 'a plugin listed in `rvm.config.json` cannot be found (package name or path), or a plugin a bundle recorded is not where the record says (the message names the plugin, its version and the place it was expected, see [spec/plugins/sdk.md](plugins/sdk.md#shipping-a-plugin-in-a-bundle))',
  E_PLUGIN_INVALID: 'not a plugin definition (no name, not an object, unreadable package.json, failed import, bad spec)',
  E_PLUGIN_DUPLICATE: 'the same plugin listed twice',
  E_PLUGIN_CLASH: 'two plugins register the same native, guard or validator name; the message names both',
  E_PLUGIN_MISSING_DEPENDENCY: 'a plugin depends on one that is not loaded',
  E_PLUGIN_CYCLE: 'plugin dependencies form a cycle',
  E_PLUGIN_SETUP: 'a plugin\'s `setup` threw',
  E_PLUGIN_MISMATCH: "a bundle is served with another plugin than it was compiled against: the file or package at the recorded place defines another name or version; the message names both (`compiled against greet 1.0.0, '../plugins/greet.js' is greet 1.1.0`)",
} as const;

/** An operation that failed while a request ran: the request answers 500, `try/catch` sees the code. */
const RUNTIME_DOCS = {
  type_error: 'an operator on the wrong types (`1 - \'a\'`, `1 < \'a\'`, `-\'a\'`, `[1] + 1`), a field of a number or bool, setting a field of a non-object, a native given a value of the wrong type',
  null_field: 'reading a field or index of `null`',
  division_by_zero: '`/` or `%` by 0, `0 ** n` with `n` negative',
  not_iterable: '`for` over a number, bool or `null`',
  index_out_of_range: '`xs[i] = v` with `i` below `-len(xs)` or beyond `len(xs)`',
  invalid_status: '`fail` with a status that is not an int 400–599, `response {}` with one outside 100–599',
  fuel_exhausted: 'the request spent `FUEL_BUDGET` (20 000 000 backward jumps and calls, all its executions together)',
  cpu_budget_exceeded: 'the request used more than `CPU_BUDGET_MS` (1000 ms) of CPU: VM code and the synchronous natives it called, all its executions together (500)',
  call_depth_exceeded: 'calls nested deeper than `MAX_CALL_DEPTH` (200)',
  next_called_twice: '`next()` called twice in one middleware',
  next_outside_middleware: '`next()` reached outside a middleware at run time (normally refused at link time, `E_SCOPE`)',
  read_only: 'assigning a field of a host value that cannot change (`request.method = …`), or a record\'s `id`, `created_at` or `updated_at`',
  unknown_field: 'reading or assigning a field a record\'s `type` does not declare (`user.emial = …`); the message names the nearest field',
  not_a_record: '`save` or `delete` of something that is not a record (records come from `T.new`, `T.create`, `T.find`…)',
  record_missing: '`delete` of a record that was never saved, or `save` of one deleted since it was read',
  nested_transaction: 'a `transaction {}` block started while another is open in the same request (a `fn` with its own block called inside one)',
  invalid_argument: 'a native given an argument outside its domain: `throw` with a code that is not snake_case or is reserved, `**` with a negative base and a fractional exponent, `repeat` or `chunk` with a count out of range, `range` with a step of 0, `sqrt` of a negative number, `clamp` or `random_int` with lo over hi, an empty `pad_start` fill, a `from_entries` pair that is not two items, unknown `set_cookie` or `format_number` option, `response.redirect` status not 301/302/303/307/308, `response.json` status outside 200–599, a value that contains itself in `json_stringify`, an unknown `response {}` field',
  invalid_json: '`json_parse` of malformed JSON or JSON nested too deep',
  invalid_date: 'a date native (`to_unix`, `date_add`, `format_date`…) given text that is not an ISO-8601 date or date-time `parse_datetime` accepts, or whose result falls outside the years 0000–9999',
  invalid_regex: 'a regex native (`regex_match`, `regex_find`, `regex_find_all`, `regex_replace`, `regex_split`) given a pattern that does not compile in RE2 syntax, is over 1000 characters or 1000 instructions, or uses what a linear-time engine cannot run (backreferences, lookaround); or a `regex_replace` replacement naming a group the pattern does not have',
  regex_too_costly: 'a regex native given a text longer than its pattern may scan in one call: the text\'s length times (the pattern\'s instructions + 10) over 8 Mi (half a million characters for a simple pattern, about 8 000 for the largest)',
  invalid_header: 'a header name that is not an HTTP token, a value with CR/LF or control characters, setting `content-length`/`transfer-encoding`, a redirect URL with control characters',
  invalid_cookie: 'a cookie name, path or domain that is not allowed',
  text_too_long: 'an operation would build a text over `MAX_TEXT_LENGTH` (16 Mi characters): `+`, interpolation, `replace`, `join`, `upper`, `lower`, `repeat`, `pad_start`, `pad_end`, `regex_replace`, `json_stringify` (refused before building where the length is known first)',
  weak_secret: '`jwt_create`/`jwt_verify` with a key under 32 bytes (RFC 7518 §3.2): a human password is not a key',
  invalid_claims: '`jwt_create` claims that are not JSON data (a secret, NaN, too deep or cyclic), a registered claim of the wrong type, or a token over 8 KiB',
  password_too_long: '`argon2_hash` of a password over 4096 bytes',
  auth_not_configured: 'the `auth` guard or `auth_user()` with neither `JWT_SECRET` nor `.secrets/jwt_secret` set (500)',
  api_key_not_configured: 'the `api_key` guard with neither `.secrets/api_keys` nor `API_KEYS` listing a key (500)',
  secret_not_found: '`secret(name)` when `.secrets/NAME` does not exist',
  invalid_env_name: 'an `env`, `env_or` or `env_exists` name outside `[A-Za-z_][A-Za-z0-9_]*`',
  invalid_key: 'an `encrypt`/`decrypt` key that is not base64 of exactly 32 bytes (text or secret), an empty `hmac_sha256` key',
  decrypt_failed: '`decrypt` of something not encrypted with that key: too short, tampered, another key, not UTF-8 (no detail, so it is no oracle)',
  list_too_long: '`list + list`, `for` over a text, or a native (`split`, `lines`, `range`, `flatten`, `push`, `regex_find_all`, `regex_split`) would build a list over `MAX_LIST_LENGTH` (4 Mi items; for `for`, a text over 4 Mi UTF-16 units), refused before building',
  invalid_secret_name: 'a secret name outside `[A-Za-z0-9._-]+` (so `..`, `/` and absolute paths), or one naming something that is not a regular file (a directory, a FIFO: refused without being read)',
  secret_outside: 'a secret file that is a symlink leading out of `.secrets/`',
  secret_too_large: 'a secret file over `MAX_SECRET_BYTES` (64 KiB)',
  invalid_ttl: 'a plugin stored a value with a TTL that is not a positive number of milliseconds',
  body_not_read: '`request.body` read through a copy of `request` (`r = request; r.body`) before the route\'s guards let the body be read; `request.body` and `body` written where they are used are always read',
  fetch_invalid_url: '`http_fetch` of a URL that is not absolute `http:` or `https:`, or that carries a user name or password (send credentials in a header)',
  fetch_refused_address: '`http_fetch` to a host that is, or resolves to, a non-public address (loopback, private, unique-local, link-local, CGNAT, unspecified, multicast, reserved; the cloud metadata services), directly or on a redirect, and is not listed in `rvm.config.json` `outbound.allow`',
  fetch_timeout: '`http_fetch` without a whole answer within its `timeout_ms` (10 s by default, at most 60 s)',
  fetch_too_large: '`http_fetch` of an answer over its `max_bytes` (1 MiB by default, at most 16 MiB): reading stops at the cap',
  fetch_failed: '`http_fetch` that could not reach the server: the name does not resolve, the connection is refused or reset, TLS fails',
  fetch_redirect_refused: '`http_fetch` redirected to another host without `follow_redirects: \'any_host\'`, from `https:` to `http:`, or to a URL that is not `http:`/`https:`',
  fetch_too_many_redirects: '`http_fetch` redirected more than `MAX_REDIRECTS` (5) times',
  wrong_arity: 'a lambda or `fn` called with another number of arguments than it takes: by a native (`reduce` passes two, `map` one) or through a parameter (`f(1, 2)` where `f` is `x => x`)',
  not_callable: 'calling a parameter or local that holds no lambda (`f(1)` where `f` is `3`)',
  lambda_cannot_wait: 'a lambda called by a native (`map`, `filter`, `sort_by`…) reached a native that waits (a database query, `http_fetch`): natives call lambdas without suspending the request; use a `for` loop',
  not_data: 'a lambda sent as JSON or text data: in a response, `json_stringify`, a stored record or shared store (it lives only within its request)',
  native_error: 'a native failed with something other than an rvm error (a plugin bug)',
  runtime_error: 'a plugin raised an rvm error without a code',
} as const;

/** The `code` of an error body: its status, default message and who answers it. */
const HTTP_TABLE = {
  bad_request: { status: 400, message: 'Bad request', doc: '`fail 400`, `response.bad_request()`, a body that cannot be read or decoded' },
  invalid_json: { status: 400, message: 'Malformed JSON body', doc: 'a malformed JSON body (or nested deeper than 128 levels)' },
  invalid_text: { status: 400, message: 'Invalid text', doc: 'a JSON body whose string or key decodes to a lone UTF-16 surrogate (`"\\ud800"` without its pair): no database or response could hold it as written' },
  unauthorized: { status: 401, message: 'Unauthorized', doc: '`fail 401`, `response.unauthorized()`, the `auth` and `role` guards and `auth_user()` without a valid token (with `WWW-Authenticate: Bearer`)' },
  token_revoked: { status: 401, message: 'Token revoked', doc: 'the `auth` and `role` guards and `auth_user()` with a token signed out by `auth_logout()` or `jwt_revoke()` (with `WWW-Authenticate: Bearer`): sign in again' },
  invalid_api_key: { status: 401, message: 'Invalid API key', doc: 'the `api_key` guard: `X-API-Key` missing or not one of the configured keys' },
  forbidden: { status: 403, message: 'Forbidden', doc: '`fail 403`, `response.forbidden()`, the `role` guard' },
  csrf_invalid: { status: 403, message: 'Invalid CSRF token', doc: 'the `csrf` guard: token missing, not equal to the `rvm_csrf` cookie, badly signed or for another session, or a foreign `Origin`' },
  ip_forbidden: { status: 403, message: 'Forbidden', doc: 'the `ip` guard: the client address is outside every listed range' },
  outside_time_window: { status: 403, message: 'Outside the allowed time window', doc: 'the `time` guard: the request came outside the window' },
  not_found: { status: 404, message: 'Not found', doc: 'no route matches the path (`{"error":"Not found","code":"not_found"}`), `fail 404`, `response.not_found()`' },
  method_not_allowed: { status: 405, message: 'Method not allowed', doc: 'the path exists for other methods; the `Allow` header lists them; the `method` guard' },
  conflict: { status: 409, message: 'Conflict', doc: '`fail 409`, `response.conflict()`, a record write clashing with a `@unique` field' },
  invalid_query: { status: 400, message: 'Invalid query', doc: 'a record filter, option or cursor computed at run time that names an unknown field or operator, has a value of the wrong type, or is malformed (a limit over 1000, a damaged, foreign or forged `after` cursor); an operator object that came from the request; a range, prefix or list on a `@hidden` field, or an order by one; a record write given the request\'s data as it came' },
  database_unavailable: { status: 503, message: 'The database is unavailable', doc: 'the records database could not be reached or did not answer in time' },
  store_unavailable: { status: 503, message: 'The shared store is unavailable', doc: 'the shared store (Redis, or the primary process under `--workers`) could not be reached or did not answer within its command timeout' },
  store_full: { status: 503, message: 'The shared store is full', doc: 'a new replay mark, attempt counter or revoked token (security state) while the in-process store holds `store.maxSecurityKeys` live ones (100 000 by default): refused rather than forget one' },
  payload_too_large: { status: 413, message: 'Payload too large', doc: 'a body over the limit (1 MiB by default)' },
  unsupported_media_type: { status: 415, message: 'Unsupported media type', doc: 'a body whose content type rvm does not parse, or a charset other than UTF-8' },
  validation_failed: { status: 422, message: 'Validation failed', doc: '`validate {}` / `query {}` failures, and record writes (`T.create`, `save`, `T.update`) refused by their type\'s decorators (with `details`)' },
  unprocessable: { status: 422, message: 'Unprocessable content', doc: '`fail 422`, `response.unprocessable()`' },
  too_many_requests: { status: 429, message: 'Too many requests', doc: '`fail 429`, `response.too_many_requests()`, the `rate_limit` guard (with `Retry-After`)' },
  internal_error: { status: 500, message: 'Internal server error', doc: 'any runtime error in production, and any unexpected failure' },
  unsupported_openapi_version: { status: 400, message: 'Unsupported OpenAPI version', doc: '`/_app/rest-api/openapi.json?version=` other than `3.1` or `3.0`' },
  reference_auth_not_configured: { status: 500, message: 'The API reference is not configured', doc: 'the API reference is enabled behind HTTP Basic in production but its password secret is missing' },
  overloaded: { status: 503, message: 'The server is busy; try again shortly', doc: 'admission (spec/language.md §7.3): `limits.maxInFlight` requests are being served, or the body would pass `limits.maxBodyMemory` (with `Connection: close`, before the body is read); or the rows a record query reads, or a large answer waiting to be sent, would pass `limits.maxResultMemory`; or expensive SQLite record reads are past their reader processes and queue (spec/plugins/records.md); with `Retry-After`' },
  response_too_large: { status: 500, message: 'The response is too large', doc: 'the handler answered a body of more than `limits.maxResponseBytes` (16 MiB by default); the log names the size' },
  deadline_exceeded: { status: 503, message: 'The request took too long', doc: 'the request had no answer within `limits.wallTimeMs` (30 s), awaits included; the log says so' },
  client_gone: { status: 499, message: 'The client closed the connection', doc: 'only in the log line: the client closed its connection while the request waited, and its work was abandoned' },
  too_many_streams: { status: 503, message: 'Too many open event streams', doc: 'too many open `/_app/rest-api/events` streams (with `Retry-After`)' },
  gone: { status: 410, message: 'Gone', doc: '`fail 410`' },
  service_unavailable: { status: 503, message: 'Service unavailable', doc: '`fail 503`' },
  request_timeout: { status: 408, message: 'Request took too long to arrive', doc: 'the server: the request line and headers did not arrive within the header timeout (answered before any route runs, with `Connection: close`)' },
  headers_too_large: { status: 431, message: 'Request headers are too large', doc: 'the server: the request headers are larger than Node\'s header limit (answered before any route runs, with `Connection: close`)' },
  invalid_phone: { status: 422, message: 'Invalid phone number', doc: '`whatsapp_send_otp` given a phone that is not a full international number (`+` or `00`, country code, 8–15 digits)' },
  otp_resend_throttled: { status: 429, message: 'A code was sent to this number recently', doc: '`whatsapp_send_otp` to a number that was sent a code less than 30 s ago, or 5 codes in the last hour (with `Retry-After`)' },
  too_many_attempts: { status: 429, message: 'Too many wrong codes; try again later', doc: '`totp_verify` and `backup_code_use` after 5 wrong codes for one secret within 15 minutes (locked 1 minute, doubling up to 1 hour), `whatsapp_verify_otp` past 10 guesses for one number in an hour (with `Retry-After`)' },
  whatsapp_not_configured: { status: 503, message: 'WhatsApp is not configured', doc: '`whatsapp_send_otp` in production without `WHATSAPP_TOKEN` and `WHATSAPP_PHONE_NUMBER_ID` (or with a `WHATSAPP_API_URL` that is not an http(s) URL)' },
  whatsapp_undeliverable: { status: 422, message: 'This number cannot receive WhatsApp messages', doc: '`whatsapp_send_otp`: the Cloud API answered 131026 (not a WhatsApp number, or its app cannot receive the message)' },
  whatsapp_throttled: { status: 429, message: 'Too many WhatsApp messages; try again shortly', doc: '`whatsapp_send_otp`: the Cloud API answered 130429 (throughput) or 131056 (too many to one number)' },
  whatsapp_window_closed: { status: 502, message: 'WhatsApp refused a text message outside the customer-service window', doc: '`whatsapp_send_otp`: the Cloud API answered 131047 (a text message outside the user\'s 24-hour window: set `WHATSAPP_TEMPLATE`)' },
  whatsapp_token_expired: { status: 502, message: 'The WhatsApp access token was refused', doc: '`whatsapp_send_otp`: the Cloud API answered 190 (`WHATSAPP_TOKEN` expired or revoked)' },
  whatsapp_template_error: { status: 502, message: 'WhatsApp refused the message template', doc: '`whatsapp_send_otp`: the Cloud API answered 132000 (parameter count) or 132001 (`WHATSAPP_TEMPLATE` missing in that language)' },
  whatsapp_failed: { status: 502, message: 'WhatsApp refused the message', doc: '`whatsapp_send_otp`: any other Cloud API error, or an answer that is not the Cloud API\'s' },
  whatsapp_unavailable: { status: 503, message: 'WhatsApp cannot be reached', doc: '`whatsapp_send_otp`: no connection to the Cloud API' },
  whatsapp_timeout: { status: 504, message: 'WhatsApp did not answer in time', doc: '`whatsapp_send_otp`: the Cloud API did not connect, answer or finish its answer within its timeouts (5 s, 10 s, 5 s)' },
  oauth_not_configured: { status: 503, message: 'This sign-in provider is not configured', doc: '`auth_<p>_login()`/`auth_<p>_callback()` for a provider without `<P>_CLIENT_ID` and `<P>_CLIENT_SECRET`, without `<P>_REDIRECT_URI` or `PUBLIC_URL`, or with an endpoint that is neither https nor http on loopback' },
  oauth_cookie_missing: { status: 400, message: 'The sign-in has expired or was not started here', doc: '`auth_<p>_callback()` without the flow cookie `auth_<p>_login()` set (absent, or older than 10 minutes): start the sign-in again' },
  oauth_cookie_invalid: { status: 400, message: 'The sign-in cookie is not valid', doc: '`auth_<p>_callback()` with a flow cookie whose signature does not match (tampered, another app secret) or that belongs to another provider' },
  oauth_state_mismatch: { status: 400, message: 'The sign-in state does not match', doc: '`auth_<p>_callback()` whose `state` is missing or differs from the one the flow cookie holds (a forged or crossed callback)' },
  oauth_replayed: { status: 400, message: 'This sign-in was already completed', doc: '`auth_<p>_callback()` for a flow whose callback already ran once (a replayed callback URL with its cookie)' },
  oauth_denied: { status: 403, message: 'Sign-in was cancelled at the provider', doc: '`auth_<p>_callback()` when the provider answered `error=access_denied` (the user declined)' },
  oauth_provider_error: { status: 400, message: 'The provider refused the sign-in', doc: '`auth_<p>_callback()` when the provider answered with an `error` other than `access_denied`' },
  oauth_code_missing: { status: 400, message: 'The callback carries no authorization code', doc: '`auth_<p>_callback()` without a `code` in the query' },
  oauth_exchange_failed: { status: 400, message: 'The authorization code was refused', doc: '`auth_<p>_callback()` when the token endpoint refused the code (used, expired, wrong verifier or redirect_uri; GitHub answers this as HTTP 200 with `error`)' },
  oauth_invalid_id_token: { status: 400, message: 'The ID token is not valid', doc: '`auth_google_callback()`/`auth_microsoft_callback()` when the ID token fails its checks: signature against the provider JWKS, `iss`, `aud`, `exp`, `nonce`' },
  oauth_provider_unavailable: { status: 502, message: 'The sign-in provider is unavailable', doc: '`auth_<p>_callback()` when the provider could not be reached, answered 5xx, or answered something that is not a token or profile' },
  oauth_provider_answer_too_large: { status: 502, message: 'The sign-in provider answered too much', doc: '`auth_<p>_callback()` when one provider answer (token, key set, userinfo, GitHub profile or e-mails) is larger than `MAX_PROVIDER_ANSWER_BYTES` (256 KiB): reading stops there, and nothing of it is used' },
  oauth_provider_timeout: { status: 504, message: 'The sign-in provider did not answer in time', doc: '`auth_<p>_callback()` when a provider call took longer than `PROVIDER_TIMEOUT_MS` (5 s, or `OAUTH_TIMEOUT_MS`)' },
  missing_header: { status: 400, message: 'Missing header', doc: 'the example third-party plugin (`plugins/example-plugin`) when its required header is absent' },
} as const satisfies Record<string, { status: number; message: string; doc: string }>;

type Codes<T> = { readonly [K in keyof T]: K };

/** Each key of `table` mapped to itself, so a call site names the code through the catalogue. */
function codesOf<T extends object>(table: T): Codes<T> {
  return Object.freeze(Object.fromEntries(Object.keys(table).map((code) => [code, code]))) as Codes<T>;
}

/** Diagnostic codes (`DIAG.E_ARITY` is `'E_ARITY'`). */
export const DIAG = codesOf(DIAGNOSTIC_DOCS);
/** Artefact codes. */
export const ARTEFACT = codesOf(ARTEFACT_DOCS);
/** Plugin load codes. */
export const PLUGIN = codesOf(PLUGIN_DOCS);
/** Runtime error codes (`RUNTIME.type_error` is `'type_error'`). */
export const RUNTIME = codesOf(RUNTIME_DOCS);

/** A diagnostic code of the catalogue. */
export type DiagnosticCode = keyof typeof DIAGNOSTIC_DOCS;
/** An artefact code of the catalogue. */
export type ArtefactCode = keyof typeof ARTEFACT_DOCS;
/** A plugin load code of the catalogue. */
export type PluginCode = keyof typeof PLUGIN_DOCS;
/** A runtime error code of the catalogue. */
export type RuntimeCode = keyof typeof RUNTIME_DOCS;
/** An HTTP error code of the catalogue. */
export type HttpCode = keyof typeof HTTP_TABLE;

/** The HTTP error entries by code (`HTTP.not_found.status` is 404). */
export const HTTP: { readonly [K in HttpCode]: HttpErrorEntry & { readonly code: K } } = Object.freeze(
  Object.fromEntries(Object.entries(HTTP_TABLE).map(([code, e]) => [code, Object.freeze({ code, family: 'http', ...e })])),
) as never;

function docEntries(family: ErrorFamily, docs: Readonly<Record<string, string>>): ErrorEntry[] {
  return Object.entries(docs).map(([code, doc]) => Object.freeze({ code, family, doc }));
}

function diagnosticEntries(): ErrorEntry[] {
  return Object.entries(DIAGNOSTIC_SECTIONS).flatMap(([section, docs]) =>
    Object.entries(docs as Readonly<Record<string, DiagnosticDoc>>).map(([code, d]) => Object.freeze({ code, family: 'diagnostic' as const, section, ...d })),
  );
}

/** Every entry of the catalogue, family by family in the order spec/errors.md lists them. */
export const ERROR_CATALOGUE: readonly ErrorEntry[] = Object.freeze([
  ...diagnosticEntries(),
  ...docEntries('artefact', ARTEFACT_DOCS),
  ...docEntries('plugin', PLUGIN_DOCS),
  ...docEntries('runtime', RUNTIME_DOCS),
  ...Object.values(HTTP),
]);

/** The families a code belongs to (`invalid_json` is both a runtime and an HTTP code). */
export function familiesOf(code: string): ErrorFamily[] {
  return ERROR_CATALOGUE.filter((e) => e.code === code).map((e) => e.family);
}

/** True for codes addressed to whoever runs rvm: diagnostics, artefact and plugin load codes (the CLI reports them as one line, not as a bug). */
export function isUserFacingCode(code: string): boolean {
  return familiesOf(code).some((f) => f === 'diagnostic' || f === 'artefact' || f === 'plugin');
}
