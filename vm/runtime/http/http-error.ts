/**
 * The error the runtime answers itself, before or around a handler: a catalogue entry (its status
 * and code), a human message, extra headers and `details`. A leaf, so the body readers (body.ts,
 * multipart.ts), admission and the dispatcher share it without importing each other.
 */
import type { HttpErrorEntry } from '../../errors.js';

/**
 * An error the runtime answers itself: status, machine code, human message, extra headers, and
 * `details` for the error body (`{field, rule, message}` entries).
 */
export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  /** Removes what reading stored before it failed (partial uploads); the dispatcher runs it. */
  cleanup?: () => Promise<void>;

  constructor(
    entry: HttpErrorEntry,
    message: string = entry.message,
    readonly headers?: Record<string, string>,
    readonly details?: unknown[],
  ) {
    super(message);
    this.name = 'HttpError';
    this.status = entry.status;
    this.code = entry.code;
  }
}
