/**
 * The histogram layout: percentiles read from the bins are within 5% of the exact ones for
 * durations from 1 ms to 1 hour (a property test against a sort of the same values), bins
 * are ordered and exact at their edges, and merging histograms equals one histogram of all
 * the values.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { BIN_COUNT, BIN_RELATIVE_ERROR_MAX, binLowerMs, binOfMs, binValueMs, percentileRank } from '../../actors/metrics/duration-bins.ts';
import { MeasureSum, PERCENTILES } from '../../actors/metrics/measure-sum.ts';

const RUNS = process.env.FUZZ_RUNS !== undefined && /^\d+$/.test(process.env.FUZZ_RUNS) ? Number(process.env.FUZZ_RUNS) : 300;
const HOUR_MS = 3_600_000;

/** The nearest-rank percentile of the values themselves: what the histogram approximates. */
function exactPercentile(values: readonly number[], permille: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[percentileRank(sorted.length, permille) - 1]!;
}

function histogramOf(values: readonly number[]): MeasureSum {
  const sum = new MeasureSum();
  for (const value of values) sum.addBin('run', binOfMs(value), 1);
  return sum;
}

/** Whole milliseconds (as jobs are timed) and fractional ones, spread over every scale from 1 ms to an hour. */
const duration = fc.oneof(
  fc.integer({ min: 1, max: HOUR_MS }),
  fc.double({ min: 1, max: HOUR_MS, noNaN: true }),
  fc.integer({ min: 0, max: 40 }).map((exponent) => Math.min(HOUR_MS, Math.max(1, Math.round(1.5 ** exponent)))),
);

describe('duration bins', () => {
  test('given any durations from 1 ms to 1 hour, then p50, p95 and p99 from the bins are within 5% of the exact percentiles', () => {
    fc.assert(
      fc.property(fc.array(duration, { minLength: 1, maxLength: 400 }), (values) => {
        const sum = histogramOf(values);
        for (const permille of Object.values(PERCENTILES)) {
          const exact = exactPercentile(values, permille);
          const read = sum.percentile('run', permille)!;
          expect(Math.abs(read - exact) / exact).toBeLessThanOrEqual(0.05);
        }
      }),
      { numRuns: RUNS },
    );
  });

  test('given two sets of durations, then merging their histograms gives the percentiles of one histogram of both', () => {
    fc.assert(
      fc.property(fc.array(duration, { maxLength: 200 }), fc.array(duration, { maxLength: 200 }), (first, second) => {
        const merged = histogramOf(first);
        merged.add(histogramOf(second));
        const whole = histogramOf([...first, ...second]);
        for (const permille of Object.values(PERCENTILES)) expect(merged.percentile('run', permille)).toBe(whole.percentile('run', permille));
        expect(merged.runCount).toBe(first.length + second.length);
      }),
      { numRuns: RUNS },
    );
  });

  test('given a value, then it lies inside its bin, and the bin reports a value within the stated error of it', () => {
    fc.assert(
      fc.property(fc.double({ min: 1, max: 2 ** 35, noNaN: true }), (value) => {
        const bin = binOfMs(value);
        expect(binLowerMs(bin)).toBeLessThanOrEqual(value);
        expect(value).toBeLessThan(binLowerMs(bin + 1));
        expect(Math.abs(binValueMs(bin) - value) / value).toBeLessThanOrEqual(BIN_RELATIVE_ERROR_MAX + 1e-12);
      }),
      { numRuns: RUNS * 3 },
    );
  });

  test('given the edges of every bin, then each edge opens its own bin and the value just under it closes the one before', () => {
    for (let bin = 1; bin < BIN_COUNT; bin++) {
      const edge = binLowerMs(bin);
      expect(binOfMs(edge)).toBe(bin);
      expect(binOfMs(edge * (1 - 1e-12))).toBe(bin - 1);
    }
  });

  test('given values under 1 ms, negatives and NaN, then they land in bin 0, which reports 0 ms; very long ones land in the last bin', () => {
    for (const value of [0, 0.4, 0.999, -5, Number.NaN]) expect(binOfMs(value)).toBe(0);
    expect(binValueMs(0)).toBe(0);
    expect(binOfMs(2 ** 40)).toBe(BIN_COUNT - 1);
    expect(binOfMs(Number.POSITIVE_INFINITY)).toBe(BIN_COUNT - 1);
    expect(binOfMs(1)).toBe(1);
    expect(binOfMs(2)).toBe(9);
  });

  test('given whole numbers of values, then the percentile rank is exact where doubles are not (95% of 100 is the 95th)', () => {
    expect(percentileRank(100, 950)).toBe(95);
    expect(percentileRank(1, 990)).toBe(1);
    expect(percentileRank(3, 500)).toBe(2);
    expect(percentileRank(1000, 990)).toBe(990);
  });

  test('given an empty histogram, then its percentiles are null', () => {
    expect(new MeasureSum().percentile('run', 500)).toBeNull();
    expect(new MeasureSum().summary('wait')).toEqual({ count: 0, p50: null, p95: null, p99: null });
  });
});
