/**
 * E.164 phone numbers (ITU-T E.164): the one spelling rvm stores, binds one-time codes to and
 * sends to. Written forms people type (`+1 (650) 555-1234`, `00 1 650 555 1234`) normalise to
 * `+16505551234`; a number without its country code is refused, since guessing one would bind a
 * code to someone else's number.
 */
import type { PluginApi } from '../../plugins/sdk.js';

/** E.164 allows at most 15 digits, country code included. */
export const MAX_PHONE_DIGITS = 15;
/** The shortest full numbers in use (country code plus subscriber number) have 8 digits. */
export const MIN_PHONE_DIGITS = 8;
/**
 * Longest input read: 15 digits with a separator between each and a little slack. Anything longer
 * is not a phone number, and the cap keeps the check's cost fixed whatever a client sends.
 */
export const MAX_PHONE_INPUT = 40;

/** Separators people write between digit groups; they carry no meaning. */
const SEPARATORS = /[\s().\-/]/g;

/**
 * The E.164 form of `input` (`+` and 8–15 digits, the first not 0), or null when it is not a full
 * international number: no `+` or `00` prefix, letters, too few or too many digits, not text.
 */
export function normalizePhone(input: unknown): string | null {
  if (typeof input !== 'string' || input.length > MAX_PHONE_INPUT) return null;
  const compact = input.replace(SEPARATORS, '');
  let digits: string;
  if (compact.startsWith('+')) digits = compact.slice(1);
  else if (compact.startsWith('00')) digits = compact.slice(2);
  else return null;
  if (!/^[1-9][0-9]*$/.test(digits)) return null;
  if (digits.length < MIN_PHONE_DIGITS || digits.length > MAX_PHONE_DIGITS) return null;
  return `+${digits}`;
}

/** Registers phone_e164, so an app stores and looks up numbers in the form codes are bound to. */
export function registerPhone(rvm: PluginApi): void {
  rvm.native('phone_e164', (_ctx, phone) => normalizePhone(phone), {
    // What is not a readable number is null, never an error.
    params: [{ name: 'phone', type: 'text', selfChecked: true }],
    returns: 'text?',
    doc: `The E.164 form of an international number ('+1 (650) 555-1234' and '00 1 650 555 1234' give '+16505551234'), or null when it has no country code ('+' or '00'), has letters, or is not ${MIN_PHONE_DIGITS}–${MAX_PHONE_DIGITS} digits.`,
  });
}
