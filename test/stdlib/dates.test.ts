/**
 * The date natives checked against Temporal (@js-temporal/polyfill): parsing and normalising,
 * calendar arithmetic on month ends and leap years, whole-unit differences, starts of units, the
 * ISO day of the week, and format_date in IANA zones across DST changes (New York, London, Lord
 * Howe's half-hour shift), on fixed cases and on random instants.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Temporal } from '@js-temporal/polyfill';
import { MAX_INSTANT, MAX_TEXT_LENGTH, MIN_INSTANT, RvmError } from '../../plugins/sdk.js';
import type { Value } from '../../plugins/sdk.js';
import { core } from '../../stdlib/core/index.js';
import { CHARS_PER_UNIT } from '../../vm/interp/budget.js';
import { fakeContext, loadForTest, type LoadedPlugins } from '../../plugins/testing.js';

let kit: LoadedPlugins;

before(async () => {
  kit = await loadForTest([core]);
});

function call(name: string, ...args: (Value | undefined)[]): unknown {
  return kit.call(name, ...args);
}

function throwsCode(fn: () => unknown, code: string): void {
  assert.throws(fn, (e: unknown) => e instanceof RvmError && e.code === code, `expected ${code}`);
}

/** Temporal's normalised UTC text of an instant: what parse_datetime should write. */
function normal(instant: Temporal.Instant): string {
  return instant.toString({ fractionalSecondDigits: 3 });
}

function utc(text: string): Temporal.ZonedDateTime {
  return Temporal.Instant.from(text).toZonedDateTimeISO('UTC');
}

/** Random instants a four-digit year can write, at whole milliseconds. */
const instants = fc.integer({ min: MIN_INSTANT, max: MAX_INSTANT }).map((ms) => Temporal.Instant.fromEpochMilliseconds(ms));
/** Instants from 1900 to 2100, where arithmetic does not leave the four-digit years. */
const modernInstants = fc.integer({ min: Date.UTC(1900, 0, 1), max: Date.UTC(2100, 0, 1) }).map((ms) => Temporal.Instant.fromEpochMilliseconds(ms));

describe('parse_datetime, to_unix, from_unix', () => {
  test('dates, offsets, fractions and no offset normalise to UTC with milliseconds', () => {
    const cases: [string, string][] = [
      ['2024-03-10', '2024-03-10T00:00:00.000Z'],
      ['2024-02-29', '2024-02-29T00:00:00.000Z'],
      ['2024-03-10T02:30:00-05:00', normal(Temporal.Instant.from('2024-03-10T02:30:00-05:00'))],
      ['2024-03-10T02:30+0530', '2024-03-09T21:00:00.000Z'],
      ['2024-12-31T23:59:59.999999999Z', '2024-12-31T23:59:59.999Z'],
      ['2024-01-01 10:00', '2024-01-01T10:00:00.000Z'],
      ['2024-01-01T10:00:00.5', '2024-01-01T10:00:00.500Z'],
      ['0000-01-01T00:00:00Z', '0000-01-01T00:00:00.000Z'],
      ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ];
    for (const [text, expected] of cases) assert.equal(call('parse_datetime', text), expected, text);
  });

  test('impossible dates and times, other formats and instants outside 0000–9999 give null', () => {
    for (const text of [
      '2023-02-29',
      '2100-02-29',
      '2024-04-31',
      '2024-13-01',
      '2024-01-01T24:00:00Z',
      '2024-01-01T10:60Z',
      '2024-01-01T10:00:60Z',
      '2024-01-01T10:00+24:00',
      '2024-1-1',
      '20240101',
      ' 2024-01-01',
      'tomorrow',
      '',
      '0000-01-01T00:00+01:00',
      '9999-12-31T23:00-01:00',
    ]) {
      assert.equal(call('parse_datetime', text), null, text);
    }
    throwsCode(() => call('to_unix', '2023-02-29'), 'invalid_date');
    throwsCode(() => call('date_add', 'soon', 1, 'day'), 'invalid_date');
  });

  test('random instants: normalised as Temporal writes them, from any offset; Unix time both ways', () => {
    const offsets = fc.constantFrom('Z', '+00:00', '-05:00', '+05:30', '+13:45', '-11:00');
    fc.assert(
      fc.property(instants, offsets, (instant, offset) => {
        const zone = offset === 'Z' ? 'UTC' : offset;
        const written = instant.toZonedDateTimeISO(zone).toPlainDateTime().toString({ fractionalSecondDigits: 3 }) + offset;
        // An offset can move the local year out of four digits; parse_datetime refuses those.
        if (!/^\d{4}-/.test(written)) return;
        assert.equal(call('parse_datetime', written), normal(instant));
        assert.equal(call('to_unix', written), instant.epochMilliseconds / 1000);
        assert.equal(call('from_unix', instant.epochMilliseconds / 1000), normal(instant));
      }),
      { numRuns: 300 },
    );
  });

  test('normalised texts order and compare as their instants do', () => {
    fc.assert(
      fc.property(instants, instants, (a, b) => {
        const ta = call('parse_datetime', a.toString()) as string;
        const tb = call('parse_datetime', b.toString()) as string;
        assert.equal(ta < tb, Temporal.Instant.compare(a, b) < 0);
        assert.equal(ta === tb, a.equals(b));
      }),
      { numRuns: 300 },
    );
  });

  test('from_unix refuses what a four-digit year cannot write', () => {
    throwsCode(() => call('from_unix', MAX_INSTANT / 1000 + 1), 'invalid_date');
    throwsCode(() => call('from_unix', MIN_INSTANT / 1000 - 1), 'invalid_date');
    assert.equal(call('from_unix', 1.2345), '1970-01-01T00:00:01.235Z');
  });
});

describe('date_add', () => {
  test('month ends and leap years, as Temporal adds on the calendar (clamped to the month)', () => {
    const cases: [string, number, string][] = [
      ['2024-01-31T10:20:30.400Z', 1, 'months'],
      ['2023-01-31T00:00:00Z', 1, 'months'],
      ['2024-03-31T00:00:00Z', -1, 'months'],
      ['2024-05-31T00:00:00Z', 1, 'months'],
      ['2024-12-31T00:00:00Z', 2, 'months'],
      ['2024-02-29T12:00:00Z', 1, 'years'],
      ['2024-02-29T12:00:00Z', 4, 'years'],
      ['2024-02-29T12:00:00Z', -100, 'years'],
      ['2000-02-29T00:00:00Z', 100, 'years'],
      ['2024-02-28T23:59:59.999Z', 1, 'days'],
      ['2024-03-10T06:30:00Z', 1, 'hours'],
      ['2024-12-31T23:59:59Z', 1, 'seconds'],
      ['2024-01-01T00:00:00Z', -1, 'weeks'],
    ].map(([text, n, unit]) => [text as string, n as number, unit as string]);
    for (const [text, n, unit] of cases) {
      const expected = normal(
        utc(text)
          .add({ [unit]: n })
          .toInstant(),
      );
      assert.equal(call('date_add', text, n, unit), expected, `${text} + ${n} ${unit}`);
      assert.equal(call('date_add', text, n, unit.slice(0, -1)), expected, 'singular units too');
    }
  });

  test('random instants and amounts agree with Temporal in every unit', () => {
    const units = fc.constantFrom('seconds', 'minutes', 'hours', 'days', 'weeks', 'months', 'years');
    fc.assert(
      fc.property(modernInstants, fc.integer({ min: -1200, max: 1200 }), units, (instant, n, unit) => {
        const expected = normal(
          instant
            .toZonedDateTimeISO('UTC')
            .add({ [unit]: n })
            .toInstant(),
        );
        assert.equal(call('date_add', instant.toString(), n, unit), expected);
      }),
      { numRuns: 400 },
    );
  });

  test('unknown units and results outside 0000–9999 are errors', () => {
    throwsCode(() => call('date_add', '2024-01-01', 1, 'fortnight'), 'invalid_argument');
    throwsCode(() => call('date_add', '2024-01-01', 1, 'Day'), 'invalid_argument');
    throwsCode(() => call('date_add', '9999-12-01', 1, 'month'), 'invalid_date');
    throwsCode(() => call('date_add', '2024-01-01', 2 ** 52, 'years'), 'invalid_date');
    throwsCode(() => call('date_add', '2024-01-01', 1.5, 'days'), 'type_error');
  });
});

describe('date_diff', () => {
  test('whole units from a to b, cut toward zero, as Temporal counts them', () => {
    const units = ['seconds', 'minutes', 'hours', 'days', 'weeks'] as const;
    fc.assert(
      fc.property(modernInstants, modernInstants, fc.constantFrom(...units), (a, b, unit) => {
        const expected = a.toZonedDateTimeISO('UTC').until(b.toZonedDateTimeISO('UTC'), { largestUnit: unit, smallestUnit: unit, roundingMode: 'trunc' })[unit];
        assert.equal(call('date_diff', a.toString(), b.toString(), unit), expected);
      }),
      { numRuns: 300 },
    );
  });

  test("months and years on month ends: as date_add counts them, which is Temporal's count at midnight", () => {
    const cases: [string, string, number][] = [
      ['2024-01-31', '2024-02-29', 1],
      ['2023-01-31', '2023-02-28', 1],
      ['2023-01-31', '2023-02-27', 0],
      ['2023-01-31', '2023-03-01', 1],
      ['2024-01-15', '2024-02-14', 0],
      ['2024-03-31', '2024-02-29', -1],
      ['2024-02-29', '2025-02-28', 12],
      ['2024-02-29', '2023-02-28', -12],
    ];
    for (const [a, b, months] of cases) {
      assert.equal(call('date_diff', a, b, 'months'), months, `${a} → ${b}`);
      const temporal = Temporal.PlainDate.from(a).until(Temporal.PlainDate.from(b), { largestUnit: 'months', smallestUnit: 'months', roundingMode: 'trunc' });
      assert.equal(temporal.months, months, `Temporal agrees on ${a} → ${b}`);
      assert.equal(call('date_diff', a, b, 'years'), Math.trunc(months / 12) + 0);
    }
  });

  test("months: the most n with date_add(a, n) not past b (checked with Temporal), and Temporal's count when a's day is in every month", () => {
    fc.assert(
      fc.property(modernInstants, modernInstants, (a, b) => {
        const n = call('date_diff', a.toString(), b.toString(), 'months') as number;
        const start = a.toZonedDateTimeISO('UTC');
        const end = b.toZonedDateTimeISO('UTC');
        const step = Temporal.Instant.compare(b, a) >= 0 ? 1 : -1;
        // n months is not past b, one more month is.
        assert.ok(Temporal.Instant.compare(start.add({ months: n }).toInstant(), b) * step <= 0);
        assert.ok(Temporal.Instant.compare(start.add({ months: n + step }).toInstant(), b) * step > 0);
        assert.equal(call('date_diff', a.toString(), b.toString(), 'years'), Math.trunc(n / 12) + 0);
        if (start.day <= 28) {
          assert.equal(n, start.until(end, { largestUnit: 'months', smallestUnit: 'months', roundingMode: 'trunc' }).months);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('start_of and day_of_week', () => {
  test('random instants: the start of each unit, weeks from Monday, as Temporal rounds', () => {
    fc.assert(
      fc.property(modernInstants, (instant) => {
        const at = instant.toZonedDateTimeISO('UTC');
        const day = at.startOfDay();
        const expected = {
          second: at.round({ smallestUnit: 'second', roundingMode: 'floor' }),
          minute: at.round({ smallestUnit: 'minute', roundingMode: 'floor' }),
          hour: at.round({ smallestUnit: 'hour', roundingMode: 'floor' }),
          day,
          week: day.subtract({ days: at.dayOfWeek - 1 }),
          month: day.with({ day: 1 }),
          year: day.with({ month: 1, day: 1 }),
        };
        for (const [unit, start] of Object.entries(expected)) assert.equal(call('start_of', instant.toString(), unit), normal(start.toInstant()), unit);
        assert.equal(call('day_of_week', instant.toString()), at.dayOfWeek);
      }),
      { numRuns: 200 },
    );
  });

  test('ISO days: 2024-03-10 is a Sunday (7), 2024-03-11 a Monday (1)', () => {
    assert.equal(call('day_of_week', '2024-03-10'), 7);
    assert.equal(call('day_of_week', '2024-03-11T23:59:59Z'), 1);
    assert.equal(call('start_of', '2024-03-10T12:00:00Z', 'week'), '2024-03-04T00:00:00.000Z');
  });
});

describe('format_date', () => {
  const PATTERN = 'YYYY-MM-DD HH:mm:ss.SSS ddd MMM';
  const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
  const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

  /** The pattern written from Temporal's wall-clock fields in `zone`. */
  function temporalFormat(instant: Temporal.Instant, zone: string): string {
    const t = instant.toZonedDateTimeISO(zone);
    const p = (n: number, w: number) => String(n).padStart(w, '0');
    return `${p(t.year, 4)}-${p(t.month, 2)}-${p(t.day, 2)} ${p(t.hour, 2)}:${p(t.minute, 2)}:${p(t.second, 2)}.${p(t.millisecond, 3)} ${DAYS[t.dayOfWeek - 1]} ${MONTHS[t.month - 1]}`;
  }

  test('either side of DST changes: New York, London, Lord Howe (half an hour)', () => {
    const changes: [string, string][] = [
      ['America/New_York', '2024-03-10T07:00:00Z'],
      ['America/New_York', '2024-11-03T06:00:00Z'],
      ['Europe/London', '2024-03-31T01:00:00Z'],
      ['Europe/London', '2024-10-27T01:00:00Z'],
      ['Australia/Lord_Howe', '2024-04-06T15:00:00Z'],
      ['Australia/Lord_Howe', '2024-10-05T15:30:00Z'],
    ];
    for (const [zone, change] of changes) {
      for (const ms of [-3_600_001, -1, 0, 1, 1_800_000, 3_600_000]) {
        const instant = Temporal.Instant.from(change).add({ milliseconds: ms });
        assert.equal(call('format_date', instant.toString(), PATTERN, zone), temporalFormat(instant, zone), `${zone} at ${instant}`);
      }
    }
    assert.equal(call('format_date', '2024-03-10T06:59:59.999Z', 'HH:mm', 'America/New_York'), '01:59');
    assert.equal(call('format_date', '2024-03-10T07:00:00Z', 'HH:mm', 'America/New_York'), '03:00');
    assert.equal(call('format_date', '2024-04-06T14:59:59Z', 'HH:mm', 'Australia/Lord_Howe'), '01:59');
    assert.equal(call('format_date', '2024-04-06T15:00:00Z', 'HH:mm', 'Australia/Lord_Howe'), '01:30');
  });

  test('random instants in zones agree with Temporal; UTC without a zone', () => {
    const zones = fc.constantFrom(
      'UTC',
      'America/New_York',
      'Europe/London',
      'Australia/Lord_Howe',
      'Asia/Kolkata',
      'Asia/Kathmandu',
      'Pacific/Chatham',
      'America/St_Johns',
    );
    fc.assert(
      fc.property(modernInstants, zones, (instant, zone) => {
        assert.equal(call('format_date', instant.toString(), PATTERN, zone), temporalFormat(instant, zone));
        if (zone === 'UTC') assert.equal(call('format_date', instant.toString(), PATTERN), temporalFormat(instant, zone));
      }),
      { numRuns: 300 },
    );
  });

  test('[literal] text, other characters as written; unknown zones are a clear error', () => {
    assert.equal(call('format_date', '2024-03-10T07:30:00Z', '[YYYY is] YYYY, [today] ddd! [', 'Europe/London'), 'YYYY is 2024, today Sun! [');
    assert.equal(call('format_date', '2024-03-10T07:30:00Z', ''), '');
    assert.throws(
      () => call('format_date', '2024-03-10', 'YYYY', 'Mars/Olympus'),
      (e: unknown) => e instanceof RvmError && e.code === 'invalid_argument' && /unknown time zone 'Mars\/Olympus'/.test(e.message),
    );
    throwsCode(() => call('format_date', '2024-03-10', 'YYYY', ''), 'invalid_argument');
  });
});

test('the date natives charge for the texts they read; format_date holds to MAX_TEXT_LENGTH', () => {
  const pattern = '[at] YYYY-MM-DD HH:mm '.repeat(50_000);
  const ctx = fakeContext();
  kit.callIn(ctx, 'format_date', '2024-03-10', pattern);
  assert.ok(ctx.budget.charged >= pattern.length / CHARS_PER_UNIT, `format_date charged ${ctx.budget.charged}`);
  const junk = '2024-03-10'.repeat(100_000);
  const parsing = fakeContext();
  assert.equal(kit.callIn(parsing, 'parse_datetime', junk), null);
  assert.ok(parsing.budget.charged >= junk.length / CHARS_PER_UNIT, `parse_datetime charged ${parsing.budget.charged}`);
  // Year 10000 in a zone east of UTC writes five digits for YYYY's four.
  throwsCode(() => call('format_date', '9999-12-31T23:00:00Z', 'YYYY'.repeat(MAX_TEXT_LENGTH / 4), 'Asia/Tokyo'), 'text_too_long');
});
