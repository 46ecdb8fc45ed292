// The metric ranges a dashboard can ask for (GET /api/queues `timeRange`) and how each
// range's health bar is cut into buckets.

export type TimeRange = '1h' | '6h' | '24h' | '7d';

export const TIME_RANGES: readonly TimeRange[] = ['1h', '6h', '24h', '7d'];

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;

/** A range is `bucketCount` consecutive buckets of `bucketWidthMs`, the last containing now. */
export interface RangeLayout {
  readonly bucketCount: number;
  readonly bucketWidthMs: number;
}

export const RANGE_LAYOUTS: Readonly<Record<TimeRange, RangeLayout>> = {
  '1h': { bucketCount: 60, bucketWidthMs: MINUTE_MS },
  '6h': { bucketCount: 72, bucketWidthMs: 5 * MINUTE_MS },
  '24h': { bucketCount: 96, bucketWidthMs: 15 * MINUTE_MS },
  '7d': { bucketCount: 168, bucketWidthMs: HOUR_MS },
};

/** Full nominal duration of a range; it equals bucket count x width by construction. */
export function rangeDurationMs(range: TimeRange): number {
  const { bucketCount, bucketWidthMs } = RANGE_LAYOUTS[range];
  return bucketCount * bucketWidthMs;
}

/**
 * Start of the `widthMs`-wide bucket that contains `atMs`. Epoch milliseconds count no leap
 * seconds and epoch 0 is a UTC midnight, so rounding down to a multiple of a width that
 * divides a day lands exactly on a UTC boundary (whole minute, quarter hour, hour).
 */
export function alignedBucketStartMs(atMs: number, widthMs: number): number {
  return Math.floor(atMs / widthMs) * widthMs;
}
