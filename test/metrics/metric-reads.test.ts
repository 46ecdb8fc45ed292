/**
 * Reads over time ranges: the tier a range is read at, and the cover of a range by the
 * coarsest buckets that fit, which must add up to exactly what the finest tier alone holds
 * for the same window; merging connections' sums equals summing every series in one.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { ALL_PARTS, MeasureSum } from '../../actors/metrics/measure-sum.ts';
import { MetricSeries } from '../../actors/metrics/metric-series.ts';
import { TASK_METRICS_DEFAULTS, TIER_WIDTH_MS } from '../../actors/metrics/metric-tiers.ts';
import { addRange, forEachStep, mergeSums, readWindow, sumRange } from '../../actors/metrics/metric-reads.ts';

const RUNS = process.env.FUZZ_RUNS !== undefined && /^\d+$/.test(process.env.FUZZ_RUNS) ? Number(process.env.FUZZ_RUNS) : 100;
const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
const NOW = Date.parse('2026-11-21T10:37:00.000Z');

const picture = (sum: MeasureSum) => ({ counts: [...sum.counts], run: [...sum.bins('run')], wait: [...sum.bins('wait')], gauges: [...sum.gauges] });

/** A series written with events at `offsets` before now (each a completion with a run time), all received now. */
function seriesWith(events: ReadonlyArray<{ agoMs: number; runMs: number; failed: boolean }>): MetricSeries {
  const series = new MetricSeries();
  for (const { agoMs, runMs, failed } of events) {
    series.record(NOW - agoMs, NOW, TASK_METRICS_DEFAULTS, (bucket) => {
      bucket.addCount(failed ? 1 : 0, 1);
      bucket.addBin('run', Math.min(288, Math.floor(runMs)), 1);
    });
  }
  series.maintain(NOW, TASK_METRICS_DEFAULTS);
  return series;
}

const event = fc.record({ agoMs: fc.integer({ min: 0, max: 40 * HOUR_MS }), runMs: fc.integer({ min: 0, max: 288 }), failed: fc.boolean() });

describe('metric reads', () => {
  test('given a range within the minute tier, then its cover by days, hours and minutes adds up to the minutes alone', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 150 }), fc.integer({ min: 0, max: 40 * 60 }), fc.integer({ min: 1, max: 40 * 60 }), (events, startAgoMinutes, lengthMinutes) => {
        const series = seriesWith(events);
        const window = readWindow(TASK_METRICS_DEFAULTS, NOW - startAgoMinutes * MINUTE_MS, NOW - startAgoMinutes * MINUTE_MS + lengthMinutes * MINUTE_MS, NOW);
        expect(window.tier).toBe('minute');
        const covered = sumRange([series], window, ALL_PARTS);
        const minutesOnly = new MeasureSum();
        series.tiers.minute.addRange(window.fromMs / MINUTE_MS, window.toMs / MINUTE_MS, minutesOnly, ALL_PARTS);
        expect(picture(covered)).toEqual(picture(minutesOnly));
        // and equal to the events themselves in the window
        const inWindow = events.filter(({ agoMs }) => NOW - agoMs >= window.fromMs && NOW - agoMs < window.toMs);
        expect(covered.count('completed') + covered.count('failed')).toBe(inWindow.length);
      }),
      { numRuns: RUNS },
    );
  });

  test('given a range, then it is read at the finest tier that keeps its start, its edges on that tier\'s buckets, never past the current bucket', () => {
    expect(readWindow(TASK_METRICS_DEFAULTS, NOW - 47 * HOUR_MS - 30_000, NOW + DAY_MS, NOW)).toEqual({ fromMs: NOW - 47 * HOUR_MS - 60_000, toMs: NOW + MINUTE_MS, tier: 'minute' });
    const hourly = readWindow(TASK_METRICS_DEFAULTS, NOW - 7 * DAY_MS - 90_000, NOW - DAY_MS - 90_000, NOW);
    expect(hourly).toEqual({ fromMs: Date.parse('2026-11-14T10:00:00.000Z'), toMs: Date.parse('2026-11-20T11:00:00.000Z'), tier: 'hour' });
    expect(readWindow(TASK_METRICS_DEFAULTS, NOW - 200 * DAY_MS, NOW, NOW).tier).toBe('day');
    // older than the day tier keeps: moved up to its oldest bucket
    expect(readWindow(TASK_METRICS_DEFAULTS, 0, NOW, NOW).fromMs).toBe(Math.floor((NOW - 730 * DAY_MS) / DAY_MS) * DAY_MS);
    // an empty range still reads one bucket
    const empty = readWindow(TASK_METRICS_DEFAULTS, NOW - HOUR_MS, NOW - HOUR_MS, NOW);
    expect(empty.toMs - empty.fromMs).toBe(TIER_WIDTH_MS.minute);
  });

  test('given several connections, then merging their sums, and their steps read together, equal one read of all their series', () => {
    const first = seriesWith([{ agoMs: 1_000, runMs: 10, failed: false }, { agoMs: 5 * HOUR_MS, runMs: 200, failed: true }]);
    const second = seriesWith([{ agoMs: 2_000, runMs: 12, failed: false }, { agoMs: 30 * HOUR_MS, runMs: 1, failed: false }]);
    const window = readWindow(TASK_METRICS_DEFAULTS, NOW - 36 * HOUR_MS, NOW, NOW);
    expect(picture(mergeSums([sumRange([first], window, ALL_PARTS), sumRange([second], window, ALL_PARTS)]))).toEqual(picture(sumRange([first, second], window, ALL_PARTS)));
    const steps = (seriesByConnection: MetricSeries[][]) => {
      const pictures: Array<ReturnType<typeof picture>> = [];
      forEachStep(seriesByConnection, window, HOUR_MS, ALL_PARTS, (sum) => pictures.push(picture(sum)));
      return pictures;
    };
    const merged = steps([[first], [second]]);
    expect(merged).toEqual(steps([[first, second]]));
    expect(merged).toHaveLength(36);
    expect(merged.reduce((sum, step) => sum + step.counts[0]! + step.counts[1]!, 0)).toBe(4);
    // each step is its own: a sum reused from step to step carries nothing over
    expect(merged.filter((step) => step.counts[0]! + step.counts[1]! > 0)).toHaveLength(3);
  });

  test('given a range of whole days, then the cover reads the day tier alone', () => {
    const series = seriesWith([{ agoMs: 30 * HOUR_MS, runMs: 3, failed: false }]);
    const dayStart = Math.floor((NOW - 30 * HOUR_MS) / DAY_MS) * DAY_MS;
    const fromDays = new MeasureSum();
    addRange(series, dayStart, dayStart + DAY_MS, 'minute', fromDays, ALL_PARTS);
    expect(fromDays.count('completed')).toBe(1);
    // empty the finer tiers: the day bucket alone still answers
    series.tiers.minute.expire(Number.MAX_SAFE_INTEGER);
    series.tiers.hour.expire(Number.MAX_SAFE_INTEGER);
    const again = new MeasureSum();
    addRange(series, dayStart, dayStart + DAY_MS, 'minute', again, ALL_PARTS);
    expect(again.count('completed')).toBe(1);
  });
});
