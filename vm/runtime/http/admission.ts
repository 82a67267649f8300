/**
 * Admission before work (spec/language.md §7.3): one process-wide count of requests in flight, one budget
 * for request bodies held in memory and one for results (rows read from a database, large
 * answers waiting to be sent). Past any, a request is answered 503 `overloaded`
 * with `Retry-After` instead of being read, parsed or run, so a flood of large bodies or of slow
 * requests costs the others a refusal, never the process its heap.
 */
import type { Limits } from '../../host/context.js';
import { HttpError } from './http-error.js';
import { HTTP } from '../../errors.js';

/**
 * Heap bytes one raw byte of a JSON body is charged for: the raw bytes (1) plus the parsed value.
 * Measured on node 20: 1 MiB of `[{},{},…]` (349,000 empty objects, the worst shape) parses into
 * about 21 MB of heap; rounded up. Other bodies (text, forms, multipart fields) are kept as
 * strings of about their size: charged 3 (raw, UTF-16 text, slack).
 */
export const JSON_BODY_MEMORY_FACTOR = 25;
export const TEXT_BODY_MEMORY_FACTOR = 3;
/** Seconds a client refused with `overloaded` is told to wait before trying again. */
export const OVERLOADED_RETRY_AFTER_S = 1;

/** The 503 every admission refusal answers. */
export function overloaded(what: string): HttpError {
  return new HttpError(HTTP.overloaded, `The server is busy (${what}); try again shortly`, {
    'retry-after': String(OVERLOADED_RETRY_AFTER_S),
    connection: 'close',
  });
}

/** Counts requests in flight and body memory against the limits. */
export class Admission {
  /** Requests between `enter` and `leave`. */
  inFlight = 0;
  /** Body bytes charged and not yet released. */
  bodyMemory = 0;
  /** Result bytes charged and not yet released. */
  resultMemory = 0;

  constructor(readonly limits: Pick<Limits, 'maxInFlight' | 'maxBodyMemory' | 'maxResultMemory'>) {}

  /** Takes a slot for a request; false (no slot taken) when every slot is in use. */
  enter(): boolean {
    if (this.inFlight >= this.limits.maxInFlight) return false;
    this.inFlight++;
    return true;
  }

  leave(): void {
    this.inFlight--;
  }

  /** Charges `bytes` of body memory; false (nothing charged) when that would pass the budget. */
  charge(bytes: number): boolean {
    if (this.bodyMemory + bytes > this.limits.maxBodyMemory) return false;
    this.bodyMemory += bytes;
    return true;
  }

  release(bytes: number): void {
    this.bodyMemory -= bytes;
  }

  /** Charges `bytes` of result memory; false (nothing charged) when that would pass the budget. */
  chargeResult(bytes: number): boolean {
    if (this.resultMemory + bytes > this.limits.maxResultMemory) return false;
    this.resultMemory += bytes;
    return true;
  }

  releaseResult(bytes: number): void {
    this.resultMemory -= bytes;
  }
}

/** The memory one raw body byte is charged for, by the body's media type (lower-case, no parameters). */
export function bodyMemoryFactor(mediaType: string): number {
  return mediaType === 'application/json' || mediaType.endsWith('+json') ? JSON_BODY_MEMORY_FACTOR : TEXT_BODY_MEMORY_FACTOR;
}
