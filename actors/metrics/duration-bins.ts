/**
 * The one bucket layout of every duration histogram (run time and wait time), in every
 * series and tier: because the layout never varies, two histograms of any ranges merge by
 * adding their bins, and a merged percentile is exactly the one a histogram of all their
 * values would give.
 *
 * Bin 0 holds everything under 1 ms (jobs are timed in whole milliseconds, so in practice
 * the 0 ms runs). Above it, 8 bins per doubling: bin i (1 <= i) holds
 * [2^((i-1)/8), 2^(i/8)) ms, up to 2^36 ms (about two years); the last bin also holds
 * anything longer. A bin is reported as its geometric middle, 2^(1/16) times its lower
 * edge, so a reported percentile is within 2^(1/16) - 1 = 4.43% of the exact one for any
 * value from 1 ms up (the property test in test/metrics/ checks p50, p95 and p99 against
 * exact percentiles). 8 bins a doubling is the coarsest layout that stays within 5%: every
 * extra bin a doubling costs about 12% more bytes per stored histogram.
 *
 * The bin of a value is found with exact arithmetic (powers of two and fixed constants),
 * never with a logarithm's rounding alone, so the same value lands in the same bin on every
 * machine and in every replay.
 */

export const BINS_PER_DOUBLING = 8;
const DOUBLINGS = 36;
/** bin 0 (under 1 ms) and 8 per doubling from 1 ms to 2^36 ms */
export const BIN_COUNT = 1 + DOUBLINGS * BINS_PER_DOUBLING;

/** 2^(k/8) for k = 0..7, written out so that no platform's pow decides a boundary. */
const STEP_LOWER = [1, 1.0905077326652577, 1.189207115002721, 1.2968395546510096, 1.4142135623730951, 1.5422108254079407, 1.681792830507429, 1.8340080864093424] as const;
/** 2^(1/16): a bin's geometric middle over its lower edge */
const HALF_STEP = 1.0442737824274138;
/** the largest relative error of a reported percentile: the middle against either edge of its bin */
export const BIN_RELATIVE_ERROR_MAX = HALF_STEP - 1;

/** Exact powers of two by doubling (every one is a double exactly). */
const POWERS_OF_TWO: readonly number[] = Array.from({ length: DOUBLINGS + 1 }, (_, exponent) => {
  let power = 1;
  for (let at = 0; at < exponent; at++) power *= 2;
  return power;
});

/** The bin of a duration in milliseconds; negative, NaN and sub-millisecond values go to bin 0. */
export function binOfMs(ms: number): number {
  if (!(ms >= 1)) return 0;
  if (ms >= POWERS_OF_TWO[DOUBLINGS]!) return BIN_COUNT - 1;
  let exponent = Math.floor(Math.log2(ms));
  // log2 may round across a power of two: settle the exponent with exact comparisons
  if (POWERS_OF_TWO[exponent]! > ms) exponent--;
  else if (POWERS_OF_TWO[exponent + 1]! <= ms) exponent++;
  const mantissa = ms / POWERS_OF_TWO[exponent]!; // exact: a division by a power of two
  let step = BINS_PER_DOUBLING - 1;
  while (mantissa < STEP_LOWER[step]!) step--;
  return 1 + exponent * BINS_PER_DOUBLING + step;
}

/** The lower edge of a bin in milliseconds. */
export function binLowerMs(bin: number): number {
  if (bin <= 0) return 0;
  const exponent = Math.floor((bin - 1) / BINS_PER_DOUBLING);
  return POWERS_OF_TWO[exponent]! * STEP_LOWER[(bin - 1) % BINS_PER_DOUBLING]!;
}

/** The value a bin reports: its geometric middle (0 for bin 0, the lower edge for the open-ended last bin). */
export function binValueMs(bin: number): number {
  if (bin <= 0) return 0;
  if (bin >= BIN_COUNT - 1) return binLowerMs(BIN_COUNT - 1);
  return binLowerMs(bin) * HALF_STEP;
}

/**
 * The rank (1-based) of the nearest-rank percentile `permille`/1000 of `count` values: the
 * smallest value with at least that share of the values at or below it. Per mille in
 * whole numbers keeps the product exact (0.95 * 100 is 95.00000000000001 in doubles).
 */
export function percentileRank(count: number, permille: number): number {
  return Math.max(1, Math.ceil((count * permille) / 1000));
}
