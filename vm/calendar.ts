/**
 * Calendar dates and date-times as text, one set of rules for the `date`/`datetime` field types and
 * the validators: recognising them (`@date`, `@datetime`), turning them
 * into instants (`@before`, `@after`) and writing instants back (the arbitraries).
 */

/** Milliseconds in a day. */
export const DAY_MS = 86_400_000;

/** `YYYY-MM-DD`, the `date` field type and RFC 3339 full-date. */
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/**
 * What the `datetime` field type accepts: RFC 3339 / ISO 8601 extended format with a time zone,
 * seconds optional, fraction up to nanoseconds, `T`, `t` or a space between, offset `±HH:MM` or `±HHMM`.
 */
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))$/;

/** Earliest and latest instants a four-digit year can write: 0000-01-01 and the end of 9999. */
export const MIN_INSTANT = utc(0, 1, 1);
export const MAX_INSTANT = utc(9999, 12, 31, 23, 59, 59, 999);

function utc(year: number, month: number, day: number, h = 0, m = 0, s = 0, ms = 0): number {
  // Date.UTC maps years 0–99 to 1900–1999; setUTCFullYear takes the year as given.
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(h, m, s, ms);
  return d.getTime();
}

/** Days in `month` (1–12) of `year`, leap years by the Gregorian rule. */
export function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

function realDay(y: number, mo: number, d: number): boolean {
  return mo >= 1 && mo <= 12 && d >= 1 && d <= daysIn(y, mo);
}

/** Midnight UTC of a `YYYY-MM-DD` that names a real calendar day, else null. */
export function dateInstant(text: string): number | null {
  const m = DATE.exec(text);
  if (!m) return null;
  const y = +m[1]!;
  const mo = +m[2]!;
  const d = +m[3]!;
  return realDay(y, mo, d) ? utc(y, mo, d) : null;
}

/** The instant a date-time names (milliseconds; finer fractions are cut), else null. */
export function datetimeInstant(text: string): number | null {
  const m = DATETIME.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi] = [+m[1]!, +m[2]!, +m[3]!, +m[4]!, +m[5]!];
  const s = m[6] === undefined ? 0 : +m[6];
  // Leap seconds (:60) are refused: a JS Date cannot hold them, so no comparison could be exact.
  if (!realDay(y, mo, d) || h > 23 || mi > 59 || s > 59) return null;
  const ms = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000);
  let offset = 0;
  if (m[8] === undefined) {
    const oh = +m[10]!;
    const om = +m[11]!;
    if (oh > 23 || om > 59) return null;
    offset = (m[9] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  return utc(y, mo, d, h, mi, s, ms) - offset;
}

/** True for `YYYY-MM-DD` naming a real day. */
export function isDate(text: string): boolean {
  return dateInstant(text) !== null;
}

/** True for a date-time with a time zone naming a real moment (see DATETIME). */
export function isDatetime(text: string): boolean {
  return datetimeInstant(text) !== null;
}

/** The instant of a date or a date-time, whichever `text` is; null for neither. */
export function instantOf(text: string): number | null {
  return dateInstant(text) ?? datetimeInstant(text);
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** `YYYY-MM-DD` of the UTC day holding `ms`. */
export function formatDate(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`;
}

/**
 * `ms` written as a date-time in the zone `offsetMinutes` east of UTC (`Z` for 0), with
 * milliseconds when `fraction` is true or the instant has some.
 */
export function formatDatetime(ms: number, offsetMinutes = 0, fraction = false): string {
  const local = new Date(ms + offsetMinutes * 60_000);
  const y = local.getUTCFullYear();
  // A zone that would push the local year out of four digits is written as UTC instead.
  if (y < 0 || y > 9999) return formatDatetime(ms, 0, fraction);
  const millis = local.getUTCMilliseconds();
  const time = `${pad(local.getUTCHours(), 2)}:${pad(local.getUTCMinutes(), 2)}:${pad(local.getUTCSeconds(), 2)}`;
  const frac = fraction || millis !== 0 ? `.${pad(millis, 3)}` : '';
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  const zone = offsetMinutes === 0 ? 'Z' : `${sign}${pad(Math.floor(abs / 60), 2)}:${pad(abs % 60, 2)}`;
  return `${formatDate(local.getTime())}T${time}${frac}${zone}`;
}
