/**
 * A value derived from an app's secrets (the JWT key, the API keys), recomputed at most once per
 * SECRETS_RECHECK_MS, so a request does not read `.secrets/` files on every call yet an edited
 * file or a rotated key takes effect within a second.
 */
import type { SecretSource } from '../../plugins/sdk.js';

/** How long a value read from `.secrets/` or the environment is trusted before it is read again. */
export const SECRETS_RECHECK_MS = 1000;

/** Milliseconds since the epoch; injectable so tests control time. */
export type Clock = () => number;

/** `compute(secrets)`, kept for SECRETS_RECHECK_MS per secret source. A throwing compute is retried on the next call. */
export class Rechecked<T> {
  private source: SecretSource | null = null;
  private checkedAt = 0;
  private value: T | undefined;

  constructor(
    private readonly compute: (secrets: SecretSource) => T,
    private readonly now: Clock = Date.now,
  ) {}

  /** The current value for `secrets`; `now` saves a clock read when the caller has just made one. */
  get(secrets: SecretSource, now: number = this.now()): T {
    if (secrets !== this.source || now - this.checkedAt >= SECRETS_RECHECK_MS || now < this.checkedAt) {
      this.value = this.compute(secrets);
      this.source = secrets;
      this.checkedAt = now;
    }
    return this.value as T;
  }
}
