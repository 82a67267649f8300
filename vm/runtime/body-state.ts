/**
 * A request's body: read and parsed once (its memory charged to admission), the checks guards
 * leave for it (`afterBody`), and the upload files it leaves to remove once the answer is final.
 * A large JSON body, once validated, drops its parsed form and parses again if read.
 */
import { HALT, type CallContext, type Halt } from '../host/context.js';
import { type Admission, bodyMemoryFactor, overloaded } from './http/admission.js';
import { DROPPED, NO_BODY, readBody, type HttpError } from './http/body.js';
import type { IncomingRequest, ParsedBody, ParsedBodyKind, UploadSpec } from './types.js';

export class BodyState {
  /** Removes the request's temporary upload files; the dispatcher runs it once the response is final. */
  cleanup: (() => Promise<void>) | null = null;
  /** Body memory charged to the admission budget, given back by `release`. */
  private charged = 0;
  private checks: ((ctx: CallContext) => void | Halt)[] | null = null;

  constructor(
    /** The parsed body; null until it is read. */
    public parsed: ParsedBody | null,
    private readonly admission: Admission | undefined,
  ) {}

  /** How the body arrived (`json`, `form`, `text`, `none`). */
  get kind(): ParsedBodyKind {
    return this.parsed === null ? 'none' : this.parsed.kind;
  }

  /** True once the body was read (or is known to be absent). */
  get known(): boolean {
    return this.parsed !== null;
  }

  /** The raw parsed body, parsed again if it was dropped; null until it is read. */
  value(): unknown {
    const parsed = this.parsed;
    if (parsed === null) return null;
    if (parsed.value !== DROPPED) return parsed.value;
    const again = { ...parsed, value: parsed.reparse!() };
    this.parsed = again;
    return again.value;
  }

  /** Drops a large JSON body's parsed form: its validated fields are what the request keeps. */
  dropParsed(): void {
    const parsed = this.parsed;
    if (parsed !== null && parsed.reparse !== undefined) this.parsed = { ...parsed, value: DROPPED };
  }

  /** What body validation reads: a dropped large JSON body's declared members alone (json-scan.ts), else the parsed body. */
  fields(names: readonly string[]): unknown {
    const parsed = this.parsed;
    if (parsed !== null && parsed.value === DROPPED && parsed.project !== undefined) return parsed.project(names);
    return this.value();
  }

  /** Leaves `check` for right after the body is read. */
  afterBody(check: (ctx: CallContext) => void | Halt): void {
    (this.checks ??= []).push(check);
  }

  /**
   * Reads and parses the body of `incoming`, charging its memory: rejected with the HttpError it
   * was refused with (400, 413, 415, 503).
   */
  read(incoming: IncomingRequest, bodyLimit: number, uploads: UploadSpec | undefined): Promise<ParsedBody> {
    const charge = this.admission === undefined ? undefined : (bytes: number, type: string) => this.charge(bytes, type);
    return readBody(incoming, bodyLimit, uploads, charge);
  }

  /** Keeps the body read, then runs the checks left for it: HALT when one answered. */
  settle(body: ParsedBody, ctx: CallContext): void | Halt {
    this.parsed = body;
    if (body.cleanup !== undefined) this.cleanup = body.cleanup;
    const checks = this.checks;
    if (checks === null) return;
    for (const check of checks) if (check(ctx) === HALT) return HALT;
  }

  /** The body was refused: the request has none, and any files written so far are to remove. */
  refuse(err: HttpError): void {
    this.parsed = NO_BODY;
    if (err.cleanup !== undefined) this.cleanup = err.cleanup;
  }

  /** Gives back the body memory charged. */
  release(): void {
    if (this.charged === 0) return;
    this.admission!.release(this.charged);
    this.charged = 0;
  }

  private charge(rawBytes: number, mediaType: string): HttpError | null {
    const bytes = rawBytes * bodyMemoryFactor(mediaType);
    if (!this.admission!.charge(bytes)) return overloaded('request bodies in memory');
    this.charged += bytes;
    return null;
  }
}
