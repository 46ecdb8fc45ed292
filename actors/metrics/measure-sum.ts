/**
 * What a bucket of task metrics measures, and the sum of any number of buckets: counts
 * add, histograms add bin by bin (one layout everywhere, duration-bins.ts), and the sampled
 * gauges keep their sums, sample counts and maxima. So a range of buckets, a task over its
 * queues, or a task over several connections merges exactly, and percentiles are taken only
 * once every part is added in.
 */
import { BIN_COUNT, binValueMs, percentileRank } from './duration-bins.ts';

/** Jobs that entered each state; their order is the stored order (a snapshot depends on it). */
export const COUNT_KINDS = ['completed', 'failed', 'retried', 'cancelled'] as const;
export type CountKind = (typeof COUNT_KINDS)[number];
export const COUNT_INDEX: Readonly<Record<CountKind, number>> = { completed: 0, failed: 1, retried: 2, cancelled: 3 };

/** The two duration histograms: run time (started to finished) and wait time (enqueued to started). */
export type DurationKind = 'run' | 'wait';

/**
 * A queue's sampled gauges (depth and the age of its oldest waiting job), in the stored
 * order: sample count, depth sum, deepest, age sum and oldest age (ms).
 */
export const GAUGE_FIELDS = 5;
export const GAUGE = { samples: 0, depthSum: 1, depthMax: 2, ageSumMs: 3, ageMaxMs: 4 } as const;

/** The parts of a bucket a read needs; a decoder skips the others' bytes. */
export const PART = { counts: 1, run: 2, wait: 4, gauges: 8 } as const;
export const ALL_PARTS = PART.counts | PART.run | PART.wait | PART.gauges;

export const PERCENTILES = { p50: 500, p95: 950, p99: 990 } as const;

/** Where a decoded bucket's parts are added: an open bucket, or a read's sum. */
export interface BucketTarget {
  addCount(index: number, count: number): void;
  addBin(kind: DurationKind, bin: number, count: number): void;
  addGauges(samples: number, depthSum: number, depthMax: number, ageSumMs: number, ageMaxMs: number): void;
}

export interface DurationSummary {
  count: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

/**
 * One histogram of a sum: a count per bin, and the lowest and highest bin written since it
 * was last cleared, so that clearing it and reading percentiles walk only those.
 */
class DenseBins {
  readonly values = new Float64Array(BIN_COUNT);
  count = 0;
  low = BIN_COUNT;
  high = -1;

  add(bin: number, count: number): void {
    this.values[bin]! += count;
    this.count += count;
    if (bin < this.low) this.low = bin;
    if (bin > this.high) this.high = bin;
  }

  clear(): void {
    if (this.high >= this.low) this.values.fill(0, this.low, this.high + 1);
    this.count = 0;
    this.low = BIN_COUNT;
    this.high = -1;
  }

  addAll(other: DenseBins): void {
    for (let bin = other.low; bin <= other.high; bin++) if (other.values[bin] !== 0) this.add(bin, other.values[bin]!);
  }

  /** Nearest-rank percentiles (per mille, rising) in ms, from one walk of the written bins. */
  percentiles(permilles: readonly number[]): Array<number | null> {
    if (this.count === 0) return permilles.map(() => null);
    const ranks = permilles.map((permille) => percentileRank(this.count, permille));
    const found: Array<number | null> = [];
    let seen = 0;
    let next = 0;
    for (let bin = this.low; bin <= this.high && next < ranks.length; bin++) {
      seen += this.values[bin]!;
      while (next < ranks.length && seen >= ranks[next]!) {
        found.push(binValueMs(bin));
        next++;
      }
    }
    return found;
  }
}

/** The sum of buckets, dense: a read adds bins into it, and sums of several parts add together. */
export class MeasureSum implements BucketTarget {
  readonly counts = new Float64Array(COUNT_KINDS.length);
  readonly gauges = new Float64Array(GAUGE_FIELDS);
  /** allocated on the first bin added: a read of counts alone never needs them */
  private run: DenseBins | null = null;
  private wait: DenseBins | null = null;

  get runCount(): number {
    return this.run?.count ?? 0;
  }

  get waitCount(): number {
    return this.wait?.count ?? 0;
  }

  /** The histogram's counts per bin (every bin of the layout). */
  bins(kind: DurationKind): Float64Array {
    return this.histogram(kind).values;
  }

  /** Back to empty, keeping the arrays: one sum reused step after step allocates nothing per step. */
  clear(): void {
    this.counts.fill(0);
    this.gauges.fill(0);
    this.run?.clear();
    this.wait?.clear();
  }

  addCount(index: number, count: number): void {
    this.counts[index]! += count;
  }

  addBin(kind: DurationKind, bin: number, count: number): void {
    if (kind === 'run') (this.run ??= new DenseBins()).add(bin, count);
    else (this.wait ??= new DenseBins()).add(bin, count);
  }

  /** Adds the gauge fields of a bucket or sum: sums and sample counts add, maxima take the larger. */
  addGauges(samples: number, depthSum: number, depthMax: number, ageSumMs: number, ageMaxMs: number): void {
    const gauges = this.gauges;
    gauges[GAUGE.samples]! += samples;
    gauges[GAUGE.depthSum]! += depthSum;
    gauges[GAUGE.depthMax] = Math.max(gauges[GAUGE.depthMax]!, depthMax);
    gauges[GAUGE.ageSumMs]! += ageSumMs;
    gauges[GAUGE.ageMaxMs] = Math.max(gauges[GAUGE.ageMaxMs]!, ageMaxMs);
  }

  /** Merges another sum in (another range, queue or connection). */
  add(other: MeasureSum): void {
    for (let at = 0; at < COUNT_KINDS.length; at++) this.counts[at]! += other.counts[at]!;
    const g = other.gauges;
    this.addGauges(g[GAUGE.samples]!, g[GAUGE.depthSum]!, g[GAUGE.depthMax]!, g[GAUGE.ageSumMs]!, g[GAUGE.ageMaxMs]!);
    if (other.run !== null) this.histogram('run').addAll(other.run);
    if (other.wait !== null) this.histogram('wait').addAll(other.wait);
  }

  count(kind: CountKind): number {
    return this.counts[COUNT_INDEX[kind]]!;
  }

  /** completed + failed */
  get finished(): number {
    return this.count('completed') + this.count('failed');
  }

  /** failed / finished; null when nothing finished */
  get failureRate(): number | null {
    return this.finished === 0 ? null : this.count('failed') / this.finished;
  }

  /** Nearest-rank percentile in ms (`permille`: 950 is p95); null without a value. */
  percentile(kind: DurationKind, permille: number): number | null {
    const histogram = kind === 'run' ? this.run : this.wait;
    return histogram === null ? null : histogram.percentiles([permille])[0]!;
  }

  summary(kind: DurationKind): DurationSummary {
    const histogram = kind === 'run' ? this.run : this.wait;
    const [p50, p95, p99] = histogram === null ? [null, null, null] : histogram.percentiles([PERCENTILES.p50, PERCENTILES.p95, PERCENTILES.p99]);
    return { count: histogram?.count ?? 0, p50: p50!, p95: p95!, p99: p99! };
  }

  private histogram(kind: DurationKind): DenseBins {
    if (kind === 'run') return (this.run ??= new DenseBins());
    return (this.wait ??= new DenseBins());
  }

  get isEmpty(): boolean {
    return this.finished === 0 && this.count('retried') === 0 && this.count('cancelled') === 0 && this.runCount === 0 && this.waitCount === 0 && this.gauges[GAUGE.samples] === 0;
  }
}
