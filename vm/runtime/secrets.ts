/**
 * Where secrets come from: `app/.secrets/NAME` files and the environment. Every read of a secret
 * file goes through `readSecretFile`, the one place that refuses names and paths leaving
 * `.secrets/` (`..`, absolute paths, symlinks pointing elsewhere).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import type { SecretSource } from '../host/context.js';
import { RvmError } from '../values.js';
import { RUNTIME } from '../errors.js';
import { UnreadableFileError, readRegularFile } from '../regular-file.js';

/** The folder of secret files inside an app. */
export const SECRETS_DIR = '.secrets';
/** What a secret name may contain: one path segment of safe characters. */
export const SECRET_NAME = /^[A-Za-z0-9._-]+$/;
/** Largest secret file read: keys and tokens, not documents. */
export const MAX_SECRET_BYTES = 64 * 1024;
/** Bytes of the generated app secret (256 bits). */
const APP_SECRET_BYTES = 32;

/**
 * The contents of `.secrets/NAME` in `appDir` without a trailing newline, or null when there is
 * no such file. Throws RvmError `invalid_secret_name` for a name outside `[A-Za-z0-9._-]+` or
 * made of dots, and `secret_outside` when the real path leaves `.secrets/`.
 */
export function readSecretFile(appDir: string | null, name: string): string | null {
  if (!SECRET_NAME.test(name) || /^\.+$/.test(name)) {
    throw new RvmError(`invalid secret name '${name}': use letters, digits, '.', '_' and '-' only`, RUNTIME.invalid_secret_name);
  }
  if (appDir === null) return null;
  const folder = join(appDir, SECRETS_DIR);
  const path = join(folder, name);
  let realPath: string;
  try {
    realPath = realpathSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  // A symlink may live in .secrets/ but must not lead out of it.
  if (!realPath.startsWith(realpathSync(folder) + sep)) throw new RvmError(`secret '${name}' points outside ${SECRETS_DIR}/`, RUNTIME.secret_outside);
  let bytes: Buffer;
  try {
    bytes = readRegularFile(realPath, MAX_SECRET_BYTES);
  } catch (err) {
    if (!(err instanceof UnreadableFileError)) throw err;
    if (err.reason === 'too_large') throw new RvmError(`secret '${name}' is larger than ${MAX_SECRET_BYTES} bytes`, RUNTIME.secret_too_large);
    throw new RvmError(`secret '${name}' is ${err.message}`, RUNTIME.invalid_secret_name);
  }
  return bytes.toString('utf8').replace(/\r?\n$/, '');
}

/** Secrets of one app: files under `.secrets/` and the given environment. */
export function createSecretSource(appDir: string | null, env: Readonly<Record<string, string | undefined>>): SecretSource {
  let appSecret: string | null = null;
  return {
    read: (name) => readSecretFile(appDir, name),
    env: (name) => env[name],
    appSecret() {
      if (appSecret !== null) return appSecret;
      const fromEnv = env.APP_SECRET;
      if (fromEnv !== undefined && fromEnv !== '') return (appSecret = fromEnv);
      const stored = readSecretFile(appDir, 'app_secret');
      if (stored !== null && stored !== '') return (appSecret = stored);
      appSecret = randomBytes(APP_SECRET_BYTES).toString('base64url');
      // Generated once and kept, so tokens signed before a restart stay valid; a bundle without
      // an app folder keeps it for the life of the process only.
      if (appDir !== null) {
        const folder = join(appDir, SECRETS_DIR);
        try {
          mkdirSync(folder, { recursive: true, mode: 0o700 });
          writeFileSync(join(folder, 'app_secret'), appSecret + '\n', { mode: 0o600, flag: 'wx' });
          chmodSync(join(folder, 'app_secret'), 0o600);
        } catch {
          // Another worker wrote it first: use theirs, so every worker signs alike.
          const theirs = readSecretFile(appDir, 'app_secret');
          if (theirs) appSecret = theirs;
        }
      }
      return appSecret;
    },
  };
}

/**
 * The HMAC-SHA256 of `text` under `secret`, base64url: what signs a token or names a stored fact
 * so that only whoever holds the app secret can make or test one. Callers put their own context
 * into `text`, so one purpose's signature never passes for another's.
 */
export function signText(secret: string, text: string): string {
  return createHmac('sha256', secret).update(text).digest('base64url');
}

/**
 * Compares two texts in time independent of where they differ (and of their lengths: both are
 * hashed first), for tokens, keys and signatures.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db) && a.length === b.length;
}
