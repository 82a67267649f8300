/**
 * The reference page's Try It inputs, from its browser module (plain ES, no DOM at import): a
 * field named like a password is typed hidden.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

/** The page's module, from the source tree (assets are served as written, not compiled). */
const render = (await import(new URL('../../../stdlib/reference/assets/render.js', import.meta.url).href)) as { textInputType(f: { name: string }): string };

test('Try It hides what is typed into password, passphrase and secret fields, and only those', () => {
  for (const name of ['password', 'new_password', 'Passphrase', 'client_secret']) assert.equal(render.textInputType({ name }), 'password', name);
  for (const name of ['email', 'name', 'pass_count', 'token_hint']) assert.equal(render.textInputType({ name }), 'text', name);
});
