/**
 * One-time codes over WhatsApp: `whatsapp_send_otp(phone, template)` and
 * `whatsapp_verify_otp(phone, code)`. A code is 6 random digits, valid 5 minutes for 5 attempts
 * and used once; `ctx.store` keeps only its HMAC under the app secret, bound to the E.164 number,
 * and every change to it (an attempt, its use, a resend mark) is one compareAndSet, so the rules
 * hold exactly when several processes share the store (ASVS 6.6). Per number, sends and guesses
 * are capped per hour in sliding windows of the same store (shared across workers and machines
 * when it is), so neither resending nor guessing adds up to a brute force.
 */
import { randomInt } from 'node:crypto';
import { HTTP, RUNTIME, RvmError, SECURITY_KEY_PREFIX, constantTimeEqual, signText, typeName } from '../../plugins/sdk.js';
import type { CallContext, Halt, HttpErrorEntry, KeyValueStore, PluginApi, SecretSource, Value, ValueObject } from '../../plugins/sdk.js';
import { normalizePhone } from './phone.js';
import { Lockout, answerGuess } from './attempts.js';
import {
  CloudApiError,
  DEFAULT_TIMEOUTS,
  WHATSAPP_DEFAULT_API_URL,
  cloudAgent,
  sendCloudMessage,
  templateMessage,
  textMessage,
  type CloudAccount,
  type CloudFailure,
  type CloudTimeouts,
} from './whatsapp-api.js';

/** ASVS 6.6.3: at least 6 random digits. */
export const CODE_DIGITS = 6;
/** ASVS 6.6.3 allows up to 10 minutes; 5 is ample to read a message and type six digits. */
export const CODE_TTL_MS = 5 * 60_000;
/** Wrong attempts before a code is dead: with 10⁶ codes, 5 guesses succeed once in 200 000. */
export const MAX_ATTEMPTS = 5;
/** Least time between two codes to one number: stops a client from spamming a phone or our Cloud API quota. */
export const RESEND_INTERVAL_MS = 30_000;
/** The window of the per-number caps below. */
export const CAP_WINDOW_MS = 60 * 60_000;
/**
 * Codes sent to one number per CAP_WINDOW_MS: enough for a user whose messages are slow, and with
 * MAX_ATTEMPTS each, bounds the guesses the codes themselves allow (30 s apart they allowed 600 an hour).
 */
export const MAX_SENDS_PER_HOUR = 5;
/**
 * Verifications of one number per CAP_WINDOW_MS, right or wrong, across all its codes: ten an hour
 * guess a 6-digit code once in 100 000 hours.
 */
export const MAX_GUESSES_PER_HOUR = 10;
/** The Cloud API's limit on a text message body. */
export const MAX_TEMPLATE_LENGTH = 4096;
/** Where the code goes in a text message template. */
export const CODE_PLACEHOLDER = '{code}';
/** Language of the authentication template when `WHATSAPP_TEMPLATE_LANG` is not set. */
export const DEFAULT_TEMPLATE_LANG = 'en_US';
/**
 * Read-then-compareAndSet rounds one call makes before giving up. A round is lost only when
 * another request changed the code in between, and a code changes at most MAX_ATTEMPTS + 1 times
 * (each counted attempt, then its use or death) before a new one may be sent: losing more rounds
 * than that means a flood on one number, which is refused.
 */
const MAX_ROUNDS = MAX_ATTEMPTS + 2;

/** What the natives need besides the call context; tests inject a clock and short timeouts. */
export interface WhatsAppOptions {
  /** Epoch milliseconds; Date.now by default. */
  now?: () => number;
  timeouts?: Partial<CloudTimeouts>;
}

/** Cloud API configuration read from the environment. */
interface CloudConfig extends CloudAccount {
  /** `WHATSAPP_TEMPLATE`: send that authentication template instead of a text message. */
  template: string | null;
  language: string;
}

/** A code as the store keeps it: never the code itself. */
interface CodeRecord extends ValueObject {
  mac: string;
  expires_at: number;
  attempts: number;
}

/** The catalogue entry a failed send answers with. */
const ANSWER_BY_FAILURE: Readonly<Record<CloudFailure, HttpErrorEntry>> = {
  window_closed: HTTP.whatsapp_window_closed,
  undeliverable: HTTP.whatsapp_undeliverable,
  throttled: HTTP.whatsapp_throttled,
  token_expired: HTTP.whatsapp_token_expired,
  template: HTTP.whatsapp_template_error,
  refused: HTTP.whatsapp_failed,
  timeout: HTTP.whatsapp_timeout,
  unreachable: HTTP.whatsapp_unavailable,
};

/**
 * The Cloud API settings, or null when `WHATSAPP_TOKEN` or `WHATSAPP_PHONE_NUMBER_ID` is unset;
 * `'invalid'` when `WHATSAPP_API_URL` is not an http(s) URL.
 */
export function cloudConfig(secrets: SecretSource): CloudConfig | null | 'invalid' {
  const token = secrets.env('WHATSAPP_TOKEN');
  const phoneNumberId = secrets.env('WHATSAPP_PHONE_NUMBER_ID');
  if (!token || !phoneNumberId) return null;
  const baseUrl = (secrets.env('WHATSAPP_API_URL') || WHATSAPP_DEFAULT_API_URL).replace(/\/+$/, '');
  let protocol: string;
  try {
    protocol = new URL(baseUrl).protocol;
  } catch {
    return 'invalid';
  }
  if (protocol !== 'https:' && protocol !== 'http:') return 'invalid';
  return {
    token,
    phoneNumberId,
    baseUrl,
    template: secrets.env('WHATSAPP_TEMPLATE') || null,
    language: secrets.env('WHATSAPP_TEMPLATE_LANG') || DEFAULT_TEMPLATE_LANG,
  };
}

/** A keyed hash: only whoever holds the app secret can test a guess against what the store holds. */
function mac(secret: string, ...parts: string[]): string {
  return signText(secret, parts.join('\0'));
}

/** The store keys of one number: named by a keyed hash, so a shared store holds no phone numbers. Security state, never evicted. */
function storeKeys(secret: string, phone: string): { code: string; resend: string; sends: string; guesses: string } {
  const prefix = `${SECURITY_KEY_PREFIX}whatsapp:`;
  const id = mac(secret, 'rvm.whatsapp.phone', phone);
  return { code: `${prefix}code:${id}`, resend: `${prefix}resend:${id}`, sends: `${prefix}sends:${id}`, guesses: `${prefix}guesses:${id}` };
}

/** What the store keeps of `code` for `phone`: bound to the number, so it is useless for another. */
function codeMac(secret: string, phone: string, code: string): string {
  return mac(secret, 'rvm.whatsapp.code', phone, code);
}

function isCodeRecord(v: Value | undefined): v is CodeRecord {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const r = v as Record<string, unknown>;
  return typeof r.mac === 'string' && typeof r.expires_at === 'number' && typeof r.attempts === 'number';
}

/** A fresh code from the CSPRNG, with its leading zeros. */
function newCode(): string {
  return randomInt(0, 10 ** CODE_DIGITS)
    .toString()
    .padStart(CODE_DIGITS, '0');
}

/** The message template as given: text of at most MAX_TEMPLATE_LENGTH holding `{code}`. Throws RvmError otherwise. */
function checkTemplate(template: Value | undefined): string {
  if (typeof template !== 'string') throw new RvmError(`whatsapp_send_otp() expects template to be text, got ${typeName(template)}`, RUNTIME.type_error);
  if (!template.includes(CODE_PLACEHOLDER) || template.length > MAX_TEMPLATE_LENGTH) {
    throw new RvmError(
      `whatsapp_send_otp(): template must contain ${CODE_PLACEHOLDER} and be at most ${MAX_TEMPLATE_LENGTH} characters`,
      RUNTIME.invalid_argument,
    );
  }
  return template;
}

/**
 * Takes the number's resend mark for RESEND_INTERVAL_MS: 0 when taken, else the milliseconds
 * until it may be taken.
 */
async function claimResend(store: KeyValueStore, key: string, now: number): Promise<number> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const held = await store.get(key);
    if (typeof held === 'number' && held > now) return held - now;
    if (await store.compareAndSet(key, held, now + RESEND_INTERVAL_MS, RESEND_INTERVAL_MS)) return 0;
  }
  return RESEND_INTERVAL_MS;
}

/** Replaces the number's code (and its attempts) with `record`; false when it kept losing the race. */
async function putCode(store: KeyValueStore, key: string, record: CodeRecord): Promise<boolean> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const held = await store.get(key);
    if (await store.compareAndSet(key, held, record, CODE_TTL_MS)) return true;
  }
  return false;
}

/** The answer for a code sent (or, in development without a token, only logged). */
function sentAnswer(sent: boolean, messageId: string | null): ValueObject {
  return { sent, message_id: messageId, expires_in: CODE_TTL_MS / 1000, resend_in: RESEND_INTERVAL_MS / 1000 };
}

/** Answers 429 `otp_resend_throttled` with the seconds to wait. */
function throttled(ctx: CallContext, waitMs: number): Halt {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  const entry = HTTP.otp_resend_throttled;
  return ctx.fail(entry.status, `A code was sent to this number recently; try again in ${seconds} s`, entry.code, { 'Retry-After': String(seconds) });
}

/** The natives' state for one app: its clock and the connections to the Cloud API. */
export class WhatsAppCodes {
  private readonly now: () => number;
  private readonly timeouts: CloudTimeouts;
  private agent: ReturnType<typeof cloudAgent> | null = null;

  constructor(options: WhatsAppOptions = {}) {
    this.now = options.now ?? Date.now;
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  }

  /**
   * Sends a new code to `phone` (text with `{code}` filled into `template`, or the
   * `WHATSAPP_TEMPLATE` authentication template), replacing any earlier one. Answers
   * `{sent, message_id, expires_in, resend_in}`, or ends the request with a coded error:
   * 422 `invalid_phone`, 429 `otp_resend_throttled`, 503 `whatsapp_not_configured`, or the Cloud
   * API's failure. Throws RvmError for a template that is not text or lacks `{code}`.
   */
  async send(ctx: CallContext, phoneArg: Value | undefined, templateArg: Value | undefined): Promise<Value | Halt> {
    const template = checkTemplate(templateArg);
    const phone = normalizePhone(phoneArg);
    if (phone === null) {
      const entry = HTTP.invalid_phone;
      return ctx.fail(entry.status, 'phone must be an international number with its country code, like +16505551234', entry.code);
    }
    const config = cloudConfig(ctx.app.secrets);
    if (config === 'invalid' || (config === null && !ctx.app.dev)) {
      ctx.log(
        config === 'invalid'
          ? 'whatsapp_send_otp: WHATSAPP_API_URL is not an http(s) URL; no code sent'
          : 'whatsapp_send_otp: WHATSAPP_TOKEN and WHATSAPP_PHONE_NUMBER_ID are not set; no code sent',
      );
      const entry = HTTP.whatsapp_not_configured;
      return ctx.fail(entry.status, entry.message, entry.code);
    }
    const secret = ctx.app.secrets.appSecret();
    const keys = storeKeys(secret, phone);
    const now = this.now();
    const wait = await claimResend(ctx.store, keys.resend, now);
    if (wait > 0) return throttled(ctx, wait);
    const sends = await ctx.store.hit(keys.sends, MAX_SENDS_PER_HOUR, CAP_WINDOW_MS, now);
    if (!sends.allowed) return throttled(ctx, sends.resetAt - now);
    const code = newCode();
    if (!(await putCode(ctx.store, keys.code, { mac: codeMac(secret, phone, code), expires_at: now + CODE_TTL_MS, attempts: 0 }))) {
      return throttled(ctx, RESEND_INTERVAL_MS);
    }
    if (config === null) {
      // Development only (checked above): the developer reads the code here instead of on a phone.
      ctx.log(`whatsapp_send_otp: not sent (no WHATSAPP_TOKEN); code for ${phone}: ${code}`);
      return sentAnswer(false, null);
    }
    const message =
      config.template === null
        ? textMessage(phone, template.replaceAll(CODE_PLACEHOLDER, code))
        : templateMessage(phone, config.template, config.language, code);
    this.agent ??= cloudAgent(this.timeouts);
    try {
      return sentAnswer(true, await sendCloudMessage(config, message, this.agent, ctx.budget.signal));
    } catch (error) {
      if (!(error instanceof CloudApiError)) throw error;
      // The code stays valid and the resend mark stays: after a timeout the message may have arrived.
      ctx.log(`whatsapp_send_otp: not sent: ${error.message}`);
      const entry = ANSWER_BY_FAILURE[error.failure];
      return ctx.fail(entry.status, entry.message, entry.code);
    }
  }

  /**
   * True once for the code last sent to `phone`, within CODE_TTL_MS and MAX_ATTEMPTS; every
   * wrong attempt is counted, and the last allowed one deletes the code. False, never an error,
   * for anything else, malformed input included (not counted). A Lockout, unjudged, past
   * MAX_GUESSES_PER_HOUR for the number.
   */
  async verify(ctx: CallContext, phoneArg: Value | undefined, codeArg: Value | undefined): Promise<boolean | Lockout> {
    const phone = normalizePhone(phoneArg);
    if (phone === null || typeof codeArg !== 'string') return false;
    const code = codeArg.trim();
    if (code.length !== CODE_DIGITS || !/^[0-9]+$/.test(code)) return false;
    const secret = ctx.app.secrets.appSecret();
    const keys = storeKeys(secret, phone);
    const now = this.now();
    const guesses = await ctx.store.hit(keys.guesses, MAX_GUESSES_PER_HOUR, CAP_WINDOW_MS, now);
    if (!guesses.allowed) return new Lockout(guesses.resetAt - now);
    const key = keys.code;
    const given = codeMac(secret, phone, code);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const held = await ctx.store.get(key);
      if (!isCodeRecord(held)) return false;
      const left = held.expires_at - this.now();
      if (left <= 0 || held.attempts >= MAX_ATTEMPTS) return false;
      const right = constantTimeEqual(held.mac, given);
      const attempts = held.attempts + 1;
      // A right code is used up; a wrong one counts, and the last allowed wrong one kills the code.
      const next = right || attempts >= MAX_ATTEMPTS ? undefined : { ...held, attempts };
      if (await ctx.store.compareAndSet(key, held, next, left)) return right;
    }
    return false;
  }
}

/** Registers whatsapp_send_otp and whatsapp_verify_otp. */
export function registerWhatsApp(rvm: PluginApi, options: WhatsAppOptions = {}): void {
  const codes = new WhatsAppCodes(options);
  const sendErrors = [HTTP.invalid_phone, HTTP.otp_resend_throttled, HTTP.whatsapp_not_configured, ...new Set(Object.values(ANSWER_BY_FAILURE))];
  rvm.native('whatsapp_send_otp', (ctx, phone, template) => codes.send(ctx, phone, template), {
    params: [
      // Checked by the native: a number it cannot read is a 422 invalid_phone answer, not a type error.
      { name: 'phone', type: 'text', selfChecked: true, doc: 'an international number: +16505551234, +1 (650) 555-1234, 00 1 650 555 1234' },
      {
        name: 'template',
        type: 'text',
        selfChecked: true,
        doc: `the text message, with ${CODE_PLACEHOLDER} where the code goes (used when WHATSAPP_TEMPLATE is not set)`,
      },
    ],
    returns: 'object',
    doc: `Sends a new ${CODE_DIGITS}-digit one-time code to the number over WhatsApp (the WHATSAPP_TEMPLATE authentication template when set, else a text message from template), valid ${CODE_TTL_MS / 60_000} minutes for ${MAX_ATTEMPTS} attempts; answers {sent, message_id, expires_in, resend_in}. Without WHATSAPP_TOKEN the code is written to the log in development (sent: false) and production answers 503 whatsapp_not_configured. One code per number every ${RESEND_INTERVAL_MS / 1000} s and at most ${MAX_SENDS_PER_HOUR} an hour (429 otp_resend_throttled with Retry-After).`,
    responses: sendErrors.map((e) => ({
      status: e.status,
      code: e.code,
      description: e.doc,
      ...(e === HTTP.otp_resend_throttled ? { headers: ['Retry-After'] } : {}),
    })),
  });
  rvm.native('whatsapp_verify_otp', (ctx, phone, code) => answerGuess(ctx, codes.verify(ctx, phone, code)), {
    params: [
      // What is not a number and a 6-digit text verifies false, never an error.
      { name: 'phone', type: 'text', selfChecked: true },
      { name: 'code', type: 'text', selfChecked: true, doc: `the ${CODE_DIGITS} digits the user received` },
    ],
    returns: 'bool',
    doc: `True once for the code last sent to the number with whatsapp_send_otp, within ${CODE_TTL_MS / 60_000} minutes; each wrong attempt counts and after ${MAX_ATTEMPTS} the code is dead. False for anything else, malformed input included. At most ${MAX_GUESSES_PER_HOUR} verifications of one number an hour, right or wrong: past that, 429 too_many_attempts with Retry-After.`,
    responses: [
      {
        status: HTTP.too_many_attempts.status,
        code: HTTP.too_many_attempts.code,
        description: `${MAX_GUESSES_PER_HOUR} verifications of this number in the last hour: retry after Retry-After seconds.`,
        headers: ['Retry-After'],
      },
    ],
  });
}
