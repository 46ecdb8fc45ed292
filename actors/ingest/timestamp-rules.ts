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
  const fields = RFC3339_FIELDS.exec(value);
  if (fields === null) return false;
  const [year, month, day, hour, minute, second] = fields.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  // Stryker disable next-line ArrayDeclaration,LogicalOperator: Bun's Date.parse refuses offsets past 23:59 by itself (below); checked here for engines that roll them over
  const [offsetHours, offsetMinutes] = [Number(fields[7] ?? 0), Number(fields[8] ?? 0)];
  if (hour > 23) return false; // Date.parse takes 24:00 as the next midnight
  // Stryker disable next-line ConditionalExpression,LogicalOperator: as above, for minutes, seconds and offsets
  if (minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return false;
  // Round trip: a day the month does not have rolls into the next month.
  const date = new Date(Date.UTC(year, month - 1, day));
  // Stryker disable next-line ConditionalExpression,LogicalOperator: a rolled-over date always has another day of the month and another month, so any one comparison decides
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return false;
  const ms = Date.parse(value);
  return Number.isFinite(ms) && ms >= EARLIEST_TIMESTAMP_MS;
}

export function futureTimestampMessage(notAfterMs: number): string {
  return `must not be ahead of the server clock by more than the configured tolerance (latest accepted now: ${new Date(notAfterMs).toISOString()})`;
}
