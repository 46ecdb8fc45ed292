import { HOUR_MS } from './time-range.ts';

// Largest distance from the epoch a Date can hold (ECMAScript time value range).
const DATE_TIME_LIMIT_MS = 8.64e15;

/**
 * How far ahead of our clock an event may be stamped (the job system's clock running fast)
 * and still never push older data out of a ring that a view at our "now" reads. Rings carry
 * this many extra slots; an event further ahead is still filed in its own bucket but may
 * displace one bucket of the oldest part of a range.
 */
export const CLOCK_AHEAD_TOLERANCE_MS = HOUR_MS;

/**
 * Whether an event time can be filed into a bucket. Anything else (NaN from an unparsable
 * timestamp, infinities, times no Date can hold) is skipped by the recorders instead of
 * thrown on, so one bad event can never stop the replay of a log.
 */
export function isRecordableTimeMs(atMs: number): boolean {
  return Number.isFinite(atMs) && Math.abs(atMs) <= DATE_TIME_LIMIT_MS;
}

/** Ring size that keeps `windowMs` readable while events arrive up to the tolerance early. */
export function slotCountFor(windowMs: number, slotWidthMs: number): number {
  return Math.ceil((windowMs + CLOCK_AHEAD_TOLERANCE_MS) / slotWidthMs);
}
