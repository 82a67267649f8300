/**
 * API keys for the `api_key` guard: the valid keys of an app come from `.secrets/api_keys` (one
 * per line, blank lines and `#` comments ignored) and the `API_KEYS` environment variable
 * (comma-separated); a presented key is compared with every one of them in constant time.
 */
import { RUNTIME, RvmError, constantTimeEqual } from '../../plugins/sdk.js';
import type { SecretSource } from '../../plugins/sdk.js';
import { Rechecked, type Clock } from './rechecked.js';

/** The request header carrying the key. */
export const API_KEY_HEADER = 'x-api-key';
/** The environment variable listing keys, comma-separated. */
export const API_KEYS_ENV = 'API_KEYS';
/** The `.secrets/` file listing keys, one per line. */
export const API_KEYS_FILE = 'api_keys';
/** Longest key compared: real keys are tens of characters; longer input is refused before hashing it. */
export const MAX_API_KEY_LENGTH = 1024;

/** The keys listed in the file's text and the variable's, without blanks, comments or duplicates. */
/** What an app without API keys is told: at `rvm check` and start (a warning), and by each request (500). */
export const API_KEYS_NOT_CONFIGURED_MESSAGE = `API keys are not configured: list them in .secrets/${API_KEYS_FILE} (one per line) or in the ${API_KEYS_ENV} environment variable (comma-separated)`;

/** True when the app lists at least one API key. */
export function apiKeysConfigured(secrets: SecretSource): boolean {
  return parseApiKeys(secrets.read(API_KEYS_FILE), secrets.env(API_KEYS_ENV)).length > 0;
}

export function parseApiKeys(fileText: string | null, envText: string | undefined): string[] {
  const keys = new Set<string>();
  if (fileText !== null) {
    for (const line of fileText.split(/\r?\n/)) {
      const key = line.trim();
      if (key !== '' && !key.startsWith('#')) keys.add(key);
    }
  }
  if (envText !== undefined) {
    for (const part of envText.split(',')) {
      const key = part.trim();
      if (key !== '') keys.add(key);
    }
  }
  return [...keys];
}

/** The valid API keys of an app, re-read at most once per SECRETS_RECHECK_MS (an edited file counts within a second). */
export class ApiKeyring {
  private readonly keys: Rechecked<string[]>;

  constructor(now: Clock = Date.now) {
    this.keys = new Rechecked((secrets) => parseApiKeys(secrets.read(API_KEYS_FILE), secrets.env(API_KEYS_ENV)), now);
  }

  /**
   * True when `presented` equals one of the app's keys. Every key is compared, in constant time,
   * whether or not an earlier one matched. Throws RvmError `api_key_not_configured` when the app lists none.
   */
  accepts(secrets: SecretSource, presented: string): boolean {
    const keys = this.keys.get(secrets);
    if (keys.length === 0) {
      throw new RvmError(API_KEYS_NOT_CONFIGURED_MESSAGE, RUNTIME.api_key_not_configured);
    }
    if (presented.length === 0 || presented.length > MAX_API_KEY_LENGTH) return false;
    let match = false;
    for (const key of keys) {
      if (constantTimeEqual(key, presented)) match = true;
    }
    return match;
  }
}
