/**
 * Core date natives. Dates travel as text: ISO-8601 in (a date, or a date-time with or without an
 * offset), and out as the normalised UTC form `YYYY-MM-DDTHH:mm:ss.SSSZ` that `now()` writes.
 * Normalised texts have one fixed width, so `<` and `==` on them order and compare instants.
 * Arithmetic is in UTC; only format_date reads a time zone (through Intl's IANA database).
 */
import { DAY_MS, MAX_INSTANT, MIN_INSTANT, RUNTIME, RvmError, checkLength, daysIn, didYouMean, formatDatetime, instantOf } from '../../plugins/sdk.js';
import type { NativeBudget, PluginApi } from '../../plugins/sdk.js';

/** Units that are fixed durations, in milliseconds. */
const DURATION_MS = { second: 1000, minute: 60_000, hour: 3_600_000, day: DAY_MS, week: 7 * DAY_MS } as const;
/** Units counted on the calendar, in months. */
const CALENDAR_MONTHS = { month: 1, year: 12 } as const;
type Unit = keyof typeof DURATION_MS | keyof typeof CALENDAR_MONTHS;
const UNITS = [...Object.keys(DURATION_MS), ...Object.keys(CALENDAR_MONTHS)] as Unit[];
const UNIT_DOC = "'second', 'minute', 'hour', 'day', 'week', 'month' or 'year' (or the plural)";

const MONTH_NAMES = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** Day names from Sunday, as Date.getUTCDay counts. */
const DAY_NAMES = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/** Registers parse_datetime, to_unix, from_unix, date_add, date_diff, start_of, day_of_week and format_date. */
export function registerDates(rvm: PluginApi): void {
  const dt = { name: 'dt', type: 'text', doc: 'an ISO-8601 date or date-time, as parse_datetime reads it' } as const;

  rvm.native(
    'parse_datetime',
    (ctx, s) => {
      const ms = parseInstant(ctx.budget, s);
      return ms === null ? null : formatDatetime(ms, 0, true);
    },
    {
      params: [{ name: 's', type: 'text' }],
      returns: 'any',
      doc: "The instant an ISO-8601 text names, normalised to UTC with milliseconds ('2024-03-10T07:00:00.000Z'), or null. Takes a date ('2024-03-10', midnight UTC), a date-time with an offset ('2024-03-10T02:30:00-05:00', 'Z'), seconds and a fraction optional, or without an offset (read as UTC); 'T' or a space between. Impossible dates ('2023-02-29'), times ('24:00') and anything else give null, as do instants outside the years 0000–9999. Normalised texts compare as their instants do: a < b when a is earlier, a == b when they are the same instant.",
    },
  );

  rvm.native('to_unix', (ctx, s) => instantArg(ctx.budget, 'to_unix', s) / 1000, {
    params: [dt],
    returns: 'number',
    doc: "Unix time of the instant in seconds, with milliseconds as a fraction: to_unix('1970-01-02') is 86400. Text that is not a date is an invalid_date error.",
  });

  rvm.native('from_unix', (_ctx, seconds) => normalised('from_unix', Math.round(seconds * 1000)), {
    params: [{ name: 'seconds', type: 'number', doc: 'Unix time, fractions of a second kept to the millisecond' }],
    returns: 'text',
    doc: "The normalised UTC text of a Unix time in seconds: from_unix(0) is '1970-01-01T00:00:00.000Z'. Outside the years 0000–9999 it is an invalid_date error.",
  });

  rvm.native(
    'date_add',
    (ctx, s, n, unitName) => {
      const ms = instantArg(ctx.budget, 'date_add', s);
      const unit = unitArg('date_add', unitName);
      return normalised('date_add', isCalendarUnit(unit) ? addMonths(ms, n * CALENDAR_MONTHS[unit]) : ms + n * DURATION_MS[unit]);
    },
    {
      params: [dt, { name: 'n', type: 'int', doc: 'how many units; negative goes back' }, { name: 'unit', type: 'text', doc: UNIT_DOC }],
      returns: 'text',
      doc: "The instant n units later, normalised. Seconds to weeks are fixed durations (a day is 24 hours: in UTC every day is); months and years move on the calendar, keeping the time of day and clamping the day to the month's end: date_add('2024-01-31', 1, 'month') is '2024-02-29T00:00:00.000Z', date_add('2024-02-29', 1, 'year') is '2025-02-28T00:00:00.000Z'. A result outside the years 0000–9999 is an invalid_date error.",
    },
  );

  rvm.native(
    'date_diff',
    (ctx, a, b, unitName) => {
      const from = instantArg(ctx.budget, 'date_diff', a);
      const to = instantArg(ctx.budget, 'date_diff', b);
      const unit = unitArg('date_diff', unitName);
      return isCalendarUnit(unit) ? wholeUnits(monthsBetween(from, to), CALENDAR_MONTHS[unit]) : wholeUnits(to - from, DURATION_MS[unit]);
    },
    {
      params: [
        { name: 'a', type: 'text', doc: 'the start' },
        { name: 'b', type: 'text', doc: 'the end' },
        { name: 'unit', type: 'text', doc: UNIT_DOC },
      ],
      returns: 'int',
      doc: "Whole units from a to b, cut toward zero: positive when b is later, negative when it is earlier (b − a, as Temporal's until and SQL Server's DATEDIFF(unit, start, end) count). Months and years count as date_add adds them: the most months n with date_add(a, n, 'months') not past b, so date_diff('2024-01-31', '2024-02-29', 'month') is 1 and date_diff('2024-01-15', '2024-02-14', 'month') is 0.",
    },
  );

  rvm.native('start_of', (ctx, s, unitName) => normalised('start_of', startOf(instantArg(ctx.budget, 'start_of', s), unitArg('start_of', unitName))), {
    params: [dt, { name: 'unit', type: 'text', doc: UNIT_DOC }],
    returns: 'text',
    doc: "The first instant of the UTC second, minute, hour, day, week (weeks start on Monday, as in ISO 8601), month or year holding dt: start_of('2024-03-14T15:09:26Z', 'month') is '2024-03-01T00:00:00.000Z'.",
  });

  rvm.native('day_of_week', (ctx, s) => isoDayOfWeek(new Date(instantArg(ctx.budget, 'day_of_week', s))), {
    params: [dt],
    returns: 'int',
    doc: "The ISO-8601 day of the week of dt in UTC: 1 for Monday to 7 for Sunday, as Python's isoweekday() and Temporal's dayOfWeek count. day_of_week('2024-03-10') is 7.",
  });

  rvm.native(
    'format_date',
    (ctx, s, pattern, zone) => {
      const ms = instantArg(ctx.budget, 'format_date', s);
      ctx.budget.chargeText(pattern.length);
      const local = new Date(zone === null || zone === undefined ? ms : ms + zoneOffset(ms, zone));
      // A token writes no more than its own length, but a year past 9999 (in a zone east of UTC) one more.
      return checkLength(
        'format_date',
        pattern.replace(PATTERN_TOKENS, (token: string, literal: string | undefined) => literal ?? formatToken(local, token)),
      );
    },
    {
      params: [
        dt,
        { name: 'pattern', type: 'text', doc: 'tokens YYYY MM DD HH mm ss SSS MMM ddd, text in [brackets] as written' },
        { name: 'zone', type: 'text', optional: true, doc: "an IANA time zone such as 'Europe/London'; UTC when left out" },
      ],
      returns: 'text',
      doc: "Writes dt with the pattern, in UTC or in the IANA zone given (its offset at that instant, summer time included): YYYY year, MM month 01–12, DD day, HH hour 00–23, mm minute, ss second, SSS millisecond, MMM 'Jan'…'Dec', ddd 'Mon'…'Sun'; text in [brackets] is written as it is, other characters too. format_date('2024-03-10T07:30:00Z', 'ddd DD MMM YYYY, HH:mm', 'America/New_York') is 'Sun 10 Mar 2024, 03:30'. An unknown zone is an invalid_argument error.",
    },
  );
}

/** The instant (ms) of a date or date-time text in the years 0000–9999, or null; charged for the text. */
function parseInstant(budget: NativeBudget, text: string): number | null {
  budget.chargeText(text.length);
  // A date-time without an offset reads as UTC: it parses once `Z` is added.
  const ms = instantOf(text) ?? instantOf(`${text}Z`);
  return ms !== null && inRange(ms) ? ms : null;
}

function instantArg(budget: NativeBudget, fn: string, text: string): number {
  const ms = parseInstant(budget, text);
  if (ms === null) throw new RvmError(`${fn}(): '${text.slice(0, 40)}' is not an ISO-8601 date or date-time`, RUNTIME.invalid_date);
  return ms;
}

function inRange(ms: number): boolean {
  return ms >= MIN_INSTANT && ms <= MAX_INSTANT;
}

/** The normalised text of a computed instant; outside the years 0000–9999 (or not a number) an invalid_date error. */
function normalised(fn: string, ms: number): string {
  if (!inRange(ms)) throw new RvmError(`${fn}(): the result falls outside the years 0000–9999`, RUNTIME.invalid_date);
  return formatDatetime(ms, 0, true);
}

function unitArg(fn: string, name: string): Unit {
  // 'days' and 'day' alike: date_add(dt, 3, 'days') and start_of(dt, 'day') both read naturally.
  const unit = (name.endsWith('s') ? name.slice(0, -1) : name) as Unit;
  if (UNITS.includes(unit)) return unit;
  const hint = didYouMean(name, UNITS) ?? `units are ${UNITS.join(', ')}`;
  throw new RvmError(`${fn}(): unknown unit '${name.slice(0, 40)}': ${hint}`, RUNTIME.invalid_argument);
}

function isCalendarUnit(unit: Unit): unit is keyof typeof CALENDAR_MONTHS {
  return unit in CALENDAR_MONTHS;
}

/** Whole `size`s in `amount`, cut toward zero (`+ 0` turns -0 into 0). */
function wholeUnits(amount: number, size: number): number {
  return Math.trunc(amount / size) + 0;
}

/** `ms` moved by whole months on the UTC calendar, the time of day kept, the day clamped to the month's end. */
function addMonths(ms: number, months: number): number {
  const date = new Date(ms);
  const total = date.getUTCFullYear() * 12 + date.getUTCMonth() + months;
  const year = Math.floor(total / 12);
  const month = total - year * 12;
  date.setUTCFullYear(year, month, Math.min(date.getUTCDate(), daysIn(year, month + 1)));
  return date.getTime();
}

/** The most months n (toward b) with addMonths(a, n) not past b. */
function monthsBetween(a: number, b: number): number {
  const from = new Date(a);
  const to = new Date(b);
  const months = (to.getUTCFullYear() - from.getUTCFullYear()) * 12 + to.getUTCMonth() - from.getUTCMonth();
  // The count of month changes is one too many when b's day and time have not come round yet;
  // addMonths(a, months ± 1) lands in the month before or after b's, so never one too few.
  if (months > 0 && addMonths(a, months) > b) return months - 1;
  if (months < 0 && addMonths(a, months) < b) return months + 1;
  return months;
}

function startOf(ms: number, unit: Unit): number {
  if (unit === 'week') {
    const day = startOf(ms, 'day');
    return day - (isoDayOfWeek(new Date(day)) - 1) * DAY_MS;
  }
  if (!isCalendarUnit(unit)) {
    const size = DURATION_MS[unit];
    // UTC has no leap seconds in JS time: every unit up to a day divides the epoch evenly.
    return ms - (((ms % size) + size) % size);
  }
  const date = new Date(ms);
  date.setUTCFullYear(date.getUTCFullYear(), unit === 'year' ? 0 : date.getUTCMonth(), 1);
  date.setUTCHours(0, 0, 0, 0);
  return date.getTime();
}

/** 1 for Monday to 7 for Sunday (ISO 8601). */
function isoDayOfWeek(date: Date): number {
  return ((date.getUTCDay() + 6) % 7) + 1;
}

/** format_date's tokens, longest first, and `[literal]` text. */
const PATTERN_TOKENS = /\[([^\]]*)\]|YYYY|SSS|MMM|MM|DD|HH|mm|ss|ddd/g;

function formatToken(local: Date, token: string): string {
  switch (token) {
    case 'YYYY':
      return pad(local.getUTCFullYear(), 4);
    case 'MMM':
      return MONTH_NAMES[local.getUTCMonth()]!;
    case 'MM':
      return pad(local.getUTCMonth() + 1, 2);
    case 'DD':
      return pad(local.getUTCDate(), 2);
    case 'HH':
      return pad(local.getUTCHours(), 2);
    case 'mm':
      return pad(local.getUTCMinutes(), 2);
    case 'ss':
      return pad(local.getUTCSeconds(), 2);
    case 'SSS':
      return pad(local.getUTCMilliseconds(), 3);
    default:
      return DAY_NAMES[local.getUTCDay()]!;
  }
}

function pad(n: number, width: number): string {
  return n < 0 ? `-${pad(-n, width)}` : String(n).padStart(width, '0');
}

/** Most zones whose formatters are kept; the IANA database names about 600. */
const MAX_ZONE_FORMATS = 1000;
const zoneFormats = new Map<string, Intl.DateTimeFormat>();

/** The offset (ms) of the IANA `zone` from UTC at the instant `ms`, as Intl's time zone database gives it. */
function zoneOffset(ms: number, zone: string): number {
  let format = zoneFormats.get(zone);
  if (format === undefined) {
    try {
      format = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        era: 'short',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      throw new RvmError(`format_date(): unknown time zone '${zone.slice(0, 40)}': use an IANA name such as 'Europe/London'`, RUNTIME.invalid_argument);
    }
    if (zoneFormats.size >= MAX_ZONE_FORMATS) zoneFormats.clear();
    zoneFormats.set(zone, format);
  }
  const field: Partial<Record<Intl.DateTimeFormatPartTypes, string>> = {};
  for (const part of format.formatToParts(ms)) field[part.type] = part.value;
  // Intl writes year 0 and before as years BC, counted from 1.
  const year = field.era === 'BC' ? 1 - Number(field.year) : Number(field.year);
  const local = new Date(0);
  local.setUTCFullYear(year, Number(field.month) - 1, Number(field.day));
  local.setUTCHours(Number(field.hour), Number(field.minute), Number(field.second));
  return local.getTime() - (ms - (((ms % 1000) + 1000) % 1000));
}
