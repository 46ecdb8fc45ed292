/**
 * What an ingest timestamp must be. The RFC 3339 shape alone is not enough: `Date.parse`
 * rolls `2026-02-31` over to March 3 and accepts year 0000, and a date far ahead pins a
 * job's state and keeps it (and its worker and queue) past retention.
 *
 * - Shape: RFC 3339 date-time with a zone (`Z` or an offset).
 * - Calendar: the fields must name a real instant (month 1-12, a day the month has,
 *   hours 0-23, minutes and seconds 0-59, offsets up to 23:59); checked by building the
 *   date from its fields and reading them back.
 * - Range: from `EARLIEST_TIMESTAMP` on. Nothing a job system reports predates it; a
 *   clock reset to 1970 or 0000 is a broken clock, not history.
 * - Not ahead of the server clock by more than the configured tolerance; that needs the
 *   clock, so it is checked in `decide` (validateEvent's `notAfterMs`), never in `evolve`.
 */

const RFC3339_FIELDS = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

export const EARLIEST_TIMESTAMP = '2000-01-01T00:00:00Z';
const EARLIEST_TIMESTAMP_MS = Date.parse(EARLIEST_TIMESTAMP);

export const TIMESTAMP_MESSAGE = `must be an ISO 8601 date-time with a zone (Z or an offset), a real calendar date, from ${EARLIEST_TIMESTAMP.slice(0, 10)} on`;

export function isValidTimestamp(value: string): boolean {
  return !Number.isNaN(timestampMs(value));
}

/**
 * The instant a valid timestamp names, in ms (what `Date.parse` gives), or NaN when the
 * value breaks a rule above. The common shape (`T`, upper-case `Z` or an offset, 0-9
 * fraction digits) is read digit by digit: validation and normalization run it for every
 * timestamp of every event, and the regex, `Date` round trip and `Date.parse` were an
 * eighth of the cost of ingesting an event. Anything else takes the general path.
 */
export function timestampMs(value: string): number {
  // Validation checks an event's (up to four) timestamps, then normalization reads the same
  // strings again: the last four answers are kept, compared by the string itself.
  // Stryker disable next-line ConditionalExpression,EqualityOperator: a cache that never hits computes the same answer
  for (let slot = 0; slot < RECENT_SLOTS; slot++) if (recentValues[slot] === value) return recentMs[slot]!;
  const ms = commonShapeMs(value) ?? generalTimestampMs(value);
  recentValues[nextSlot] = value;
  recentMs[nextSlot] = ms;
  // Stryker disable next-line ArithmeticOperator: a slot outside the four is never looked up, so the cache misses; the answer is the same
  nextSlot = (nextSlot + 1) % RECENT_SLOTS;
  return ms;
}

const RECENT_SLOTS = 4;
// Stryker disable next-line ArrayDeclaration: an empty array holds no stale value either; it only misses until written
const recentValues: Array<string | undefined> = new Array<string | undefined>(RECENT_SLOTS).fill(undefined);
const recentMs = new Float64Array(RECENT_SLOTS);
let nextSlot = 0;

function generalTimestampMs(value: string): number {
  const fields = RFC3339_FIELDS.exec(value);
  if (fields === null) return Number.NaN;
  const [year, month, day, hour, minute, second] = fields.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  // Stryker disable next-line ArrayDeclaration,LogicalOperator: Bun's Date.parse refuses offsets past 23:59 by itself (below); checked here for engines that roll them over
  const [offsetHours, offsetMinutes] = [Number(fields[7] ?? 0), Number(fields[8] ?? 0)];
  if (hour > 23) return Number.NaN; // Date.parse takes 24:00 as the next midnight
  // Stryker disable next-line ConditionalExpression,LogicalOperator: as above, for minutes, seconds and offsets
  if (minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return Number.NaN;
  // Round trip: a day the month does not have rolls into the next month.
  const date = new Date(Date.UTC(year, month - 1, day));
  // Stryker disable next-line ConditionalExpression,LogicalOperator: a rolled-over date always has another day of the month and another month, so any one comparison decides
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return Number.NaN;
  const ms = Date.parse(value);
  return Number.isFinite(ms) && ms >= EARLIEST_TIMESTAMP_MS ? ms : Number.NaN;
}

const ZERO = 48;

/** Digits of `value` from `start` to `end` as a number, or -1 if any is not a digit. */
function digitsAt(value: string, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) {
    const digit = value.charCodeAt(i) - ZERO;
    if (digit < 0 || digit > 9) return -1;
    n = n * 10 + digit;
  }
  return n;
}

/**
 * `YYYY-MM-DDTHH:MM:SS[.fraction]` then `Z` or `+HH:MM`/`-HH:MM`: its ms or NaN; undefined for
 * any other shape. Exported for its test: a slip here falls back to the general rule with
 * the same answer, only slower, so the test asserts that common shapes are read here.
 */
export function commonShapeMs(value: string): number | undefined {
  const length = value.length;
  // Stryker disable next-line ConditionalExpression,LogicalOperator: shorter or longer strings fail the shape checks below as well; the bounds only save work
  if (length < 20 || length > 35) return undefined;
  if (value[4] !== '-' || value[7] !== '-' || value[10] !== 'T' || value[13] !== ':' || value[16] !== ':') return undefined;
  const year = digitsAt(value, 0, 4);
  const month = digitsAt(value, 5, 7);
  const day = digitsAt(value, 8, 10);
  const hour = digitsAt(value, 11, 13);
  const minute = digitsAt(value, 14, 16);
  const second = digitsAt(value, 17, 19);
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return undefined;
  let at = 19;
  let fractionMs = 0;
  if (value[at] === '.') {
    const first = at + 1;
    // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: past the end charCodeAt is NaN, no digit, so the loop stops there anyway
    while (at + 1 < length && digitsAt(value, at + 1, at + 2) >= 0) at++;
    const digits = at - first + 1;
    if (digits < 1 || digits > 9) return undefined;
    // Date.parse keeps whole milliseconds: the first three fraction digits
    for (let i = 0; i < 3; i++) fractionMs = fractionMs * 10 + (i < digits ? value.charCodeAt(first + i) - ZERO : 0);
    at++;
  }
  let offsetMinutesTotal = 0;
  if (value[at] === 'Z' && at + 1 === length) {
    // UTC
  } else if ((value[at] === '+' || value[at] === '-') && at + 6 === length && value[at + 3] === ':') {
    const offsetHours = digitsAt(value, at + 1, at + 3);
    const offsetMinutes = digitsAt(value, at + 4, at + 6);
    if (offsetHours < 0 || offsetMinutes < 0) return undefined;
    if (offsetHours > 23 || offsetMinutes > 59) return Number.NaN;
    offsetMinutesTotal = (value[at] === '+' ? 1 : -1) * (offsetHours * 60 + offsetMinutes);
  } else {
    return undefined;
  }
  if (hour > 23 || minute > 59 || second > 59 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return Number.NaN;
  // Date.UTC reads years 0-99 as 1900-1999; such a year is long before the earliest anyway
  // Stryker disable next-line EqualityOperator: year 100 is long before the earliest accepted date either way
  if (year < 100) return Number.NaN;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second, fractionMs) - offsetMinutesTotal * 60_000;
  return ms >= EARLIEST_TIMESTAMP_MS ? ms : Number.NaN;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

export function futureTimestampMessage(notAfterMs: number): string {
  return `must not be ahead of the server clock by more than the configured tolerance (latest accepted now: ${new Date(notAfterMs).toISOString()})`;
}
