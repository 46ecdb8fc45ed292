/**
 * Reading task metrics over a time range, one connection's series at a time. A range is
 * read at the finest tier that still keeps its start (its edges rounded to that tier's
 * buckets), and covered with the coarsest buckets that fit inside it: whole days from the
 * day tier, the hours at its edges from the hour tier, the minutes at theirs from the
 * minute tier. Every tier holds the same events in its own buckets and the histograms
 * share one layout, so the cover adds up to exactly what the finest tier alone would give,
 * reading ~90 day buckets where it would read 130,000 minutes.
 *
 * Reads of several connections are merged in one place (`mergeSums`, `mergeSteps`): sums
 * add, histograms add bin by bin, and percentiles are taken after.
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
 * keeps `fromMs` (a start older than every tier keeps is moved up to the day tier's
 * oldest bucket), edges rounded outwards to its buckets, the end no later than the bucket
 * holding now. `toMs` is kept above `fromMs`.
 */
export function readWindow(settings: TaskMetricsSettings, fromMs: number, toMs: number, nowMs: number): ReadWindow {
  const tier = TIER_NAMES.find((name) => floorTo(fromMs, TIER_WIDTH_MS[name]) >= oldestKeptMs(settings, name, nowMs)) ?? 'day';
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

/** One connection's sums of `seriesList` for each step of the window ([fromMs + k * stepMs, + stepMs)). */
export function sumSteps(seriesList: readonly MetricSeries[], window: ReadWindow, stepMs: number, parts: number): MeasureSum[] {
  const steps = stepCount(window, stepMs);
  const sums = Array.from({ length: steps }, () => new MeasureSum());
  if (seriesList.length === 0) return sums;
  for (let at = 0; at < steps; at++) {
    const fromMs = window.fromMs + at * stepMs;
    const toMs = Math.min(window.toMs, fromMs + stepMs);
    for (const series of seriesList) addRange(series, fromMs, toMs, window.tier, sums[at]!, parts);
  }
  return sums;
}

export function stepCount(window: ReadWindow, stepMs: number): number {
  return Math.ceil((window.toMs - window.fromMs) / stepMs);
}

/** Several connections' sums as one. */
export function mergeSums(sums: Iterable<MeasureSum>): MeasureSum {
  const merged = new MeasureSum();
  for (const sum of sums) merged.add(sum);
  return merged;
}

/** Several connections' step sums (the same window and step) as one list. */
export function mergeSteps(perConnection: readonly MeasureSum[][]): MeasureSum[] {
  if (perConnection.length === 1) return perConnection[0]!;
  const steps = perConnection[0]?.length ?? 0;
  return Array.from({ length: steps }, (_, at) => mergeSums(perConnection.map((sums) => sums[at]!)));
}

export function floorTo(ms: number, widthMs: number): number {
  return Math.floor(ms / widthMs) * widthMs;
}

export function ceilTo(ms: number, widthMs: number): number {
  return Math.ceil(ms / widthMs) * widthMs;
}
