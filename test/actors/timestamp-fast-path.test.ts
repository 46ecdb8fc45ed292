/**
 * timestampMs reads the common timestamp shape digit by digit. Property: for any string it
 * gives what the general rule gives (the RFC 3339 pattern, the calendar round trip, the
 * earliest date, then Date.parse), NaN for exactly the strings that rule refuses, so
 * validation errors and stored times are unchanged.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { commonShapeMs, EARLIEST_TIMESTAMP, timestampMs } from '../../actors/ingest/timestamp-rules.ts';

const RFC3339_FIELDS = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/** The rule as it reads in timestamp-rules.ts, written the slow way. */
function referenceMs(value: string): number {
  const fields = RFC3339_FIELDS.exec(value);
  if (fields === null) return Number.NaN;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = fields.slice(1, 9).map((field) => Number(field ?? 0)) as number[];
  if (hour! > 23 || minute! > 59 || second! > 59 || offsetHours! > 23 || offsetMinutes! > 59) return Number.NaN;
  const date = new Date(Date.UTC(year!, month! - 1, day!));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month! - 1 || date.getUTCDate() !== day) return Number.NaN;
  const ms = Date.parse(value);
  return Number.isFinite(ms) && ms >= Date.parse(EARLIEST_TIMESTAMP) ? ms : Number.NaN;
}

const digits = (max: number, width: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(width, '0'));
const year = fc.oneof(digits(9999, 4), fc.constantFrom('0099', '1999', '2000', '2024', '2100', '2400'));
const fraction = fc.oneof(fc.constant(''), fc.stringMatching(/^\.[0-9]{0,11}$/));
const zone = fc.oneof(
  fc.constantFrom('Z', 'z', '', 'ZZ', '+', 'Z '),
  fc.tuple(fc.constantFrom('+', '-'), digits(25, 2), fc.constantFrom(':', '', '-'), digits(61, 2)).map((parts) => parts.join('')),
);
/** Near the shape: every field at and past its range, every separator sometimes wrong. */
const nearTimestamp = fc
  .tuple(year, fc.constantFrom('-', '/'), digits(14, 2), digits(32, 2), fc.constantFrom('T', 't', ' ', 'X'), digits(25, 2), digits(61, 2), fc.constantFrom(':', '.'), digits(61, 2), fraction, zone)
  .map(([y, dash, mo, d, t, h, mi, colon, s, f, z]) => `${y}${dash}${mo}-${d}${t}${h}:${mi}${colon}${s}${f}${z}`);
const realInstant = fc.integer({ min: Date.parse('1999-12-30T00:00:00Z'), max: Date.parse('2100-01-01T00:00:00Z') }).map((ms) => new Date(ms).toISOString());

describe('timestampMs', () => {
  test('equals the general rule on near-valid, valid and arbitrary strings', () => {
    fc.assert(
      fc.property(fc.oneof({ weight: 6, arbitrary: nearTimestamp }, { weight: 2, arbitrary: realInstant }, { weight: 1, arbitrary: fc.string() }), (value) => {
        expect(timestampMs(value)).toBe(referenceMs(value));
      }),
      { numRuns: 20_000 },
    );
  });

  test('known edges', () => {
    const cases = [
      '2000-01-01T00:00:00.0Z',
      '1999-12-31T23:59:59.999Z',
      '1999-12-31T23:00:00-01:00',
      '0099-12-31T04:02:00.0-19:58',
      '2024-02-29T12:00:00Z',
      '2023-02-29T12:00:00Z',
      '2026-11-23T10:00:00.1234567+05:30',
      '2026-11-23T10:00:00.1234567890Z',
      '2026-11-23T24:00:00Z',
      '2026-11-23T10:00:00+24:00',
    ];
    for (const value of cases) expect([value, timestampMs(value)]).toEqual([value, referenceMs(value)]);
  });

  test('the common shape is read by the fast path itself, with the general rule\'s answer', () => {
    // A slip in the fast path falls back to the general rule (same answer, slower): only
    // asking the fast path directly shows that it still reads what it is there for.
    const withFraction = fc.tuple(realInstant, fc.integer({ min: 0, max: 9 })).map(([iso, digits]) => `${iso.slice(0, 19)}${digits === 0 ? '' : '.' + '123456789'.slice(0, digits)}Z`);
    const withOffset = fc
      .tuple(realInstant, fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
      .map(([iso, sign, hours, minutes]) => `${iso.slice(0, 23)}${sign}${String(hours).padStart(2, '0')}:${String(minutes).padStart(2, '0')}`);
    fc.assert(
      fc.property(fc.oneof(realInstant, withFraction, withOffset), (value) => {
        expect([value, commonShapeMs(value)]).toEqual([value, referenceMs(value)]);
      }),
      { numRuns: 5_000 },
    );
    for (const value of ['2024-02-29T00:00:00Z', '2000-02-29T23:59:59.999Z', '2026-12-31T23:59:59+23:59', '2026-01-01T00:00:00-00:01', '2026-04-30T12:00:00Z', '2026-06-30T12:00:00Z', '2026-09-30T12:00:00Z', '2026-11-30T12:00:00Z', '2026-12-31T12:00:00Z', '2026-01-01T00:00:00.123456789+05:30']) {
      expect([value, commonShapeMs(value)]).toEqual([value, Date.parse(value)]);
    }
  });

  test('the fast path refuses (NaN) what breaks a rule within its shape, and leaves other shapes (undefined) to the general rule', () => {
    const refused = [
      '2023-02-29T00:00:00Z', '2100-02-29T00:00:00Z', '1900-02-29T00:00:00Z', '2026-04-31T00:00:00Z', '2026-06-31T00:00:00Z',
      '2026-09-31T00:00:00Z', '2026-11-31T00:00:00Z', '2026-13-01T00:00:00Z', '2026-00-01T00:00:00Z', '2026-01-00T00:00:00Z',
      '2026-01-32T00:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01T00:60:00Z', '2026-01-01T00:00:60Z', '2026-01-01T00:00:00+24:00',
      '2026-01-01T00:00:00+00:60', '1999-12-31T23:59:59.999Z', '0099-01-01T00:00:00Z', '0100-01-01T00:00:00Z', '0000-01-01T00:00:00Z',
    ];
    for (const value of refused) expect([value, commonShapeMs(value)]).toEqual([value, Number.NaN]);
    const otherShapes = [
      '2026-01-01T00:00:00', '2026-01-01t00:00:00Z', '2026-01-01 00:00:00Z', '2026-01-01T00:00:00z', '2026-01-01T00:00:00.Z',
      '2026-01-01T00:00:00.1234567890Z', '2026-01-01T00:00:00+0000', '2026-01-01T00:00:00+00:0a', '2026-01-01T00:00:00+0a:00',
      '2026-01-01T00:00:00ZZ', '2026-01-01T00:00:00.123+00:00Z', '2026/01-01T00:00:00Z', '2026-01/01T00:00:00Z', '2026-01-01X00:00:00Z',
      '2026-01-01T00.00:00Z', '2026-01-01T00:00.00Z', '202a-01-01T00:00:00Z', '2026-0a-01T00:00:00Z', '2026-01-0aT00:00:00Z',
      '2026-01-01T0a:00:00Z', '2026-01-01T00:0a:00Z', '2026-01-01T00:00:0aZ', '2026-01-01T00:00:00 Z', '2026-01-01T00:00:00.12a4Z',
      '2026-01-01T00:00:00.1234567890123456Z', '2026-1/-01T00:00:00Z', '2026-01-01T1/:00:00Z', '2026-01-01T00:00:00x05:30',
    ];
    for (const value of otherShapes) expect([value, commonShapeMs(value)]).toEqual([value, undefined]);
    // characters on either side of '0'..'9' are not digits
    for (const near of ['/', ':']) expect(commonShapeMs(`2026-01-01T00:00:0${near}Z`)).toBeUndefined();
  });

  test('shapes the fast path leaves alone still meet every rule: the hour, and the earliest instant itself', () => {
    expect(timestampMs('2026-01-01t24:00:00Z')).toBeNaN(); // Date.parse alone would take it as the next midnight
    expect(timestampMs('2000-01-01t00:00:00z')).toBe(Date.parse(EARLIEST_TIMESTAMP));
  });
});
