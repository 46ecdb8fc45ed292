/**
 * Reading task metrics over a time range, one connection's series at a time. A range is
 * read at the finest tier that still keeps its start (its edges rounded to that tier's
 * buckets), and covered with the coarsest buckets that fit inside it: whole days from the
 * day tier, the hours at its edges from the hour tier, the minutes at theirs from the
 * minute tier. Every tier holds the same events in its own buckets and the histograms
 * share one layout, so the cover adds up to exactly what the finest tier alone would give,
 * reading ~90 day buckets where it would read 130,000 minutes.
 *
 * Reads of several connections are merged in one place (`mergeSums` for a range, the step
 * sum of `forEachStep` for steps): sums add, histograms add bin by bin, and percentiles are
 * taken after.
 */
import { MeasureSum, type BucketTarget } from './measure-sum.ts';
import type { MetricSeries } from './metric-series.ts';
import { TIER_NAMES, TIER_WIDTH_MS, type TaskMetricsSettings, type TierName } from './metric-tiers.ts';

/** A range as it is read: its edges on the buckets of `tier`. */
export interface ReadWindow {
  fromMs: number;
  toMs: number;
  tier: TierName;
}

/**
 * The window a request for [fromMs, toMs) is read at, as of `nowMs`: the finest tier that
 * keeps `fromMs` (a start older than a tier keeps, by one bucket at most, or older than
 * every tier keeps, is moved up to that tier's oldest bucket), edges rounded outwards to its buckets, the end no later than the bucket
 * holding now. `toMs` is kept above `fromMs`.
 */
export function readWindow(settings: TaskMetricsSettings, fromMs: number, toMs: number, nowMs: number): ReadWindow {
  // A start up to one bucket older than a tier keeps is read from its oldest bucket rather
  // than at the next tier: "the last 90 days", asked a moment ago, is still read by the hour.
  const tier = TIER_NAMES.find((name) => floorTo(fromMs, TIER_WIDTH_MS[name]) >= oldestKeptMs(settings, name, nowMs) - TIER_WIDTH_MS[name]) ?? 'day';
  const widthMs = TIER_WIDTH_MS[tier];
  const startMs = Math.max(floorTo(fromMs, widthMs), oldestKeptMs(settings, tier, nowMs));
  const endMs = Math.min(ceilTo(toMs, widthMs), floorTo(nowMs, widthMs) + widthMs);
  return { fromMs: startMs, toMs: Math.max(endMs, startMs + widthMs), tier };
}

/** The start of the oldest bucket a tier still answers for at `nowMs`. */
export function oldestKeptMs(settings: TaskMetricsSettings, tier: TierName, nowMs: number): number {
  return floorTo(nowMs - settings.retentionMs[tier], TIER_WIDTH_MS[tier]);
}

/**
 * Adds `series` over [fromMs, toMs) to `target`: both edges on buckets of `finest` (see
 * `readWindow`), the inside covered by coarser tiers where whole buckets of theirs fit.
 */
export function addRange(series: MetricSeries, fromMs: number, toMs: number, finest: TierName, target: BucketTarget, parts: number): void {
  const finestAt = TIER_NAMES.indexOf(finest);
  for (let at = TIER_NAMES.length - 1; at > finestAt; at--) {
    const widthMs = TIER_WIDTH_MS[TIER_NAMES[at]!];
    const insideFromMs = ceilTo(fromMs, widthMs);
    const insideToMs = floorTo(toMs, widthMs);
    if (insideFromMs >= insideToMs) continue;
    series.tiers[TIER_NAMES[at]!].addRange(insideFromMs / widthMs, insideToMs / widthMs, target, parts);
    if (fromMs < insideFromMs) addRange(series, fromMs, insideFromMs, finest, target, parts);
    if (insideToMs < toMs) addRange(series, insideToMs, toMs, finest, target, parts);
    return;
  }
  const widthMs = TIER_WIDTH_MS[finest];
  series.tiers[finest].addRange(Math.floor(fromMs / widthMs), Math.ceil(toMs / widthMs), target, parts);
}

/** One connection's sum of `seriesList` over the window. */
export function sumRange(seriesList: readonly MetricSeries[], window: ReadWindow, parts: number): MeasureSum {
  const sum = new MeasureSum();
  for (const series of seriesList) addRange(series, window.fromMs, window.toMs, window.tier, sum, parts);
  return sum;
}

/**
 * Each step of the window ([fromMs + k * stepMs, + stepMs)) summed over every connection's
 * series, handed to `visit` in order. The connections are merged into one sum per step as
 * they are read (adding is the merge), and the sum is reused for the next step: a read of
 * 2,000 steps allocates one sum, not 2,000 histograms.
 */
export function forEachStep(seriesByConnection: readonly (readonly MetricSeries[])[], window: ReadWindow, stepMs: number, parts: number, visit: (sum: MeasureSum, at: number) => void): void {
  const sum = new MeasureSum();
  const steps = stepCount(window, stepMs);
  for (let at = 0; at < steps; at++) {
    sum.clear();
    const fromMs = window.fromMs + at * stepMs;
    const toMs = Math.min(window.toMs, fromMs + stepMs);
    for (const seriesList of seriesByConnection) for (const series of seriesList) addRange(series, fromMs, toMs, window.tier, sum, parts);
    visit(sum, at);
  }
}

export function stepCount(window: ReadWindow, stepMs: number): number {
  return Math.ceil((window.toMs - window.fromMs) / stepMs);
}

/** Several connections' sums as one. */
export function mergeSums(sums: readonly MeasureSum[]): MeasureSum {
  if (sums.length === 1) return sums[0]!;
  const merged = new MeasureSum();
  for (const sum of sums) merged.add(sum);
  return merged;
}

export function floorTo(ms: number, widthMs: number): number {
  return Math.floor(ms / widthMs) * widthMs;
}

export function ceilTo(ms: number, widthMs: number): number {
  return Math.ceil(ms / widthMs) * widthMs;
}
