/**
 * The `secrets` standard plugin: `env`, `env_or`, `env_exists` and `secret`. Secret values are
 * `SecretText`: they show as `[secret]` in logs, error pages and JSON, stay secret through
 * concatenation, and only natives that take keys reveal them.
 */
import { RUNTIME, RvmError, SecretText, definePlugin } from '../../plugins/sdk.js';
import type { CallContext, PluginDefinition } from '../../plugins/sdk.js';

/**
 * Environment variables whose names say they hold credentials; their values come back as
 * secrets. Matched anywhere in the name, case-insensitive: `JWT_SECRET`, `GITHUB_TOKEN`,
 * `STRIPE_API_KEY`, `DB_PASSWORD`, `SMTP_PASS`, `PRIVATE_*`, `*_CREDENTIALS`, `SENTRY_DSN`, `*_AUTH`...
 */
export const SECRET_ENV_NAME = /SECRET|TOKEN|KEY|PASS|PWD|PRIVATE|CREDENTIAL|AUTH|SALT|SIGNATURE|DSN/i;
/** A URL carrying a password (`postgres://user:pw@host/db`) is secret whatever its variable is called. */
const URL_WITH_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/?#@\s]*:[^/?#@\s]*@/i;
/** What an environment variable name may be (POSIX portable names). */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** True when the variable `name` with this value is returned as a secret. */
export function isSecretEnv(name: string, value: string): boolean {
  return SECRET_ENV_NAME.test(name) || URL_WITH_PASSWORD.test(value);
}

/** The variable's value (a secret when `isSecretEnv`), or null when unset or empty. */
function readEnv(ctx: CallContext, fn: string, n: string): string | SecretText | null {
  if (!ENV_NAME.test(n)) throw new RvmError(`${fn}() expects an environment variable name of letters, digits and '_', got '${n}'`, RUNTIME.invalid_env_name);
  const value = ctx.app.secrets.env(n);
  if (value === undefined || value === '') return null;
  return isSecretEnv(n, value) ? new SecretText(value) : value;
}

/** The secrets plugin as apps load it. */
export const secrets: PluginDefinition = definePlugin({
  name: 'secrets',
  version: '1.0.0',
  setup(rvm) {
    rvm.native('env', (ctx, name) => readEnv(ctx, 'env', name), {
      params: [{ name: 'name', type: 'text', doc: 'The environment variable, e.g. PUBLIC_URL.' }],
      returns: 'text?',
      doc:
        'The value of an environment variable, or null when it is unset or empty. Names that look like credentials (containing SECRET, TOKEN, KEY, PASS, PWD, PRIVATE, CREDENTIAL, AUTH, SALT, SIGNATURE or DSN) ' +
        'and URLs with a password come back as a secret, shown as [secret]. A name outside [A-Za-z_][A-Za-z0-9_]* is an invalid_env_name error.',
    });

    rvm.native('env_or', (ctx, name, fallback) => readEnv(ctx, 'env_or', name) ?? fallback ?? null, {
      params: [
        { name: 'name', type: 'text', doc: 'The environment variable.' },
        { name: 'default', type: 'any', doc: 'What to return when it is unset or empty.' },
      ],
      returns: 'any',
      doc: 'Like env, with default in place of null.',
    });

    rvm.native('env_exists', (ctx, name) => readEnv(ctx, 'env_exists', name) !== null, {
      params: [{ name: 'name', type: 'text', doc: 'The environment variable.' }],
      returns: 'bool',
      doc: 'True when the environment variable is set and not empty.',
    });

    rvm.native(
      'secret',
      (ctx, n) => {
        const value = ctx.app.secrets.read(n);
        if (value === null) throw new RvmError(`no secret '${n}' in .secrets/`, RUNTIME.secret_not_found);
        return new SecretText(value);
      },
      {
        params: [{ name: 'name', type: 'text', doc: "A file name in the app's .secrets/ folder, e.g. 'stripe_key'." }],
        returns: 'secret',
        doc:
          'The contents of app/.secrets/NAME (without its trailing newline) as a secret: shown as [secret] in logs, error pages and JSON, kept secret through + and interpolation, accepted by natives that take keys. ' +
          'Read on every call, so a rotated file applies at once. A name outside [A-Za-z0-9._-]+ (or only dots) is invalid_secret_name, a symlink leading out of .secrets/ is secret_outside, a missing file is secret_not_found.',
      },
    );
  },
});

export default secrets;
