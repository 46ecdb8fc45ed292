/**
 * The Metrics page's range and step, as they are kept in the address (`range=7d&step=1h`),
 * and the steps each range can be read at: a range whose start is older than 48 hours is
 * kept in hours, older than 90 days in days (the service's default tiers; a step it cannot
 * read is answered 400, and the page says so).
 */
const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

export const RANGES: ReadonlyArray<[string, number]> = [
  ['1h', HOUR_MS],
  ['24h', DAY_MS],
  ['7d', 7 * DAY_MS],
  ['30d', 30 * DAY_MS],
  ['90d', 90 * DAY_MS],
  ['1y', 365 * DAY_MS],
];
export const DEFAULT_RANGE = '24h';

const STEPS: ReadonlyArray<[string, number]> = [
  ['1m', MINUTE_MS],
  ['5m', 5 * MINUTE_MS],
  ['15m', 15 * MINUTE_MS],
  ['1h', HOUR_MS],
  ['6h', 6 * HOUR_MS],
  ['1d', DAY_MS],
  ['7d', 7 * DAY_MS],
];

export function rangeOf(query: URLSearchParams): { name: string; ms: number } {
  const found = RANGES.find(([name]) => name === query.get('range')) ?? RANGES.find(([name]) => name === DEFAULT_RANGE)!;
  return { name: found[0], ms: found[1] };
}

/** Steps a range can be read at, with at most ~1,500 points and at least 12. */
export function stepsFor(rangeMs: number): string[] {
  const bucketMs = rangeMs > 90 * DAY_MS ? DAY_MS : rangeMs > 2 * DAY_MS ? HOUR_MS : MINUTE_MS;
  return STEPS.filter(([, ms]) => ms % bucketMs === 0 && rangeMs / ms <= 1_500 && rangeMs / ms >= 12).map(([name]) => name);
}

/** The address's step when the range can be read at it, else about 100 points' worth. */
export function stepOf(query: URLSearchParams, rangeMs: number): string {
  const allowed = stepsFor(rangeMs);
  const asked = query.get('step');
  if (asked !== null && allowed.includes(asked)) return asked;
  return allowed.find((name) => rangeMs / STEPS.find(([each]) => each === name)![1] <= 150) ?? allowed[allowed.length - 1]!;
}
