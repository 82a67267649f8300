/**
 * An example third-party plugin, "slugs": URL slugs for titles. It shows the three registration
 * APIs a plugin has — a native (`slugify`), a guard (`require_header`) and a validator
 * (`@slug_case`, alias `@kebab_case`) — written only against the public SDK.
 */
import { RvmError, definePlugin, typeName } from 'rvm-runtime/sdk';
import type { Value } from 'rvm-runtime/sdk';

/** Longest slug `slugify` produces: long enough for a title, short enough for a readable URL. */
export const MAX_SLUG_LENGTH = 80;
/** Separators `slugify` accepts: characters that need no escaping in a URL path. */
const SEPARATORS: ReadonlySet<string> = new Set(['-', '_', '.']);
/** What `slugify` produces with the default separator, and so what `@slug_case` accepts. */
const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const COMBINING_MARKS = /\p{M}+/gu;

/** Turns any text into a lower-case ASCII slug: 'Crème Brûlée!' → 'creme-brulee'. */
export function slugify(text: string, separator = '-'): string {
  const words = text
    .normalize('NFKD')
    .replace(COMBINING_MARKS, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
  let slug = '';
  for (const word of words) {
    const next = slug === '' ? word : `${slug}${separator}${word}`;
    // Cut between words, never inside one, unless the first word alone is too long.
    if (next.length > MAX_SLUG_LENGTH) return slug === '' ? word.slice(0, MAX_SLUG_LENGTH) : slug;
    slug = next;
  }
  return slug;
}

/** The header names a request carries are lower-case; an empty value counts as missing. */
function headerValue(headers: Readonly<Record<string, string | string[] | undefined>>, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  const first = Array.isArray(v) ? v[0] : v;
  return first === undefined || first.trim() === '' ? undefined : first;
}

export default definePlugin({
  name: 'slugs',
  version: '1.0.0',
  setup(rvm) {
    rvm.native(
      'slugify',
      (_ctx, text, separator) => {
        const sep: Value = separator ?? '-';
        if (typeof sep !== 'string' || !SEPARATORS.has(sep)) {
          throw new RvmError(`slugify() separator must be '-', '_' or '.', got ${JSON.stringify(sep)}`, 'invalid_argument');
        }
        return slugify(text, sep);
      },
      {
        params: [
          { name: 'text', type: 'text', doc: 'Any text, e.g. a title.' },
          // Checked below: a separator other than these three, text or not, is invalid_argument.
          { name: 'separator', type: 'text', optional: true, selfChecked: true, doc: "'-' (default), '_' or '.'." },
        ],
        returns: 'text',
        doc: `Turns text into a URL slug: accents removed, lower-case ASCII letters and digits, words joined by the separator, at most ${MAX_SLUG_LENGTH} characters cut between words.`,
      },
    );

    rvm.guard(
      'require_header',
      (ctx, args, use) => {
        const name = args[0];
        if (typeof name !== 'string') throw new RvmError(`require_header expects a header name, got ${typeName(name)}`, 'type_error');
        // `require_header('x'): optional` documents the header without enforcing it.
        if (use.mode === 'optional' || headerValue(ctx.request.headers, name) !== undefined) return;
        return ctx.fail(400, `Header '${name}' is required`, 'missing_header');
      },
      {
        params: [{ name: 'name', type: 'text', doc: 'The header that must be present, e.g. X-Tenant.' }],
        doc: 'Rejects a request that lacks the named header (or sends it empty) with 400 missing_header.',
        responses: [{ status: 400, code: 'missing_header', description: 'A required header is missing.' }],
      },
    );

    rvm.validator('slug_case', {
      types: ['text'],
      params: [],
      aliases: ['kebab_case'],
      doc: "The text is already a slug as slugify() makes it: lower-case letters and digits in words joined by single hyphens, e.g. 'hello-world'.",
      message: () => "must be a slug such as 'hello-world' (lower-case letters, digits and single hyphens)",
      build: () => (value) => typeof value === 'string' && value.length <= MAX_SLUG_LENGTH && SLUG.test(value),
      schema: () => ({ pattern: SLUG.source, maxLength: MAX_SLUG_LENGTH }),
    });
  },
});
