/**
 * What a bucket of task metrics measures, and the sum of any number of buckets: counts
 * add, histograms add bin by bin (one layout everywhere, duration-bins.ts), and the sampled
 * gauges keep their sums, sample counts and maxima. So a range of buckets, a task over its
 * queues, or a task over several connections merges exactly, and percentiles are taken only
 * once every part is added in.
 */
import { BIN_COUNT, percentileOfBins } from './duration-bins.ts';

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

/** The sum of buckets, dense: a read adds bins into it, and sums of several parts add together. */
export class MeasureSum implements BucketTarget {
  readonly counts = new Float64Array(COUNT_KINDS.length);
  readonly gauges = new Float64Array(GAUGE_FIELDS);
  /** allocated on the first bin added: a read of counts alone never needs them */
  private runBins: Float64Array | null = null;
  private waitBins: Float64Array | null = null;
  runCount = 0;
  waitCount = 0;

  bins(kind: DurationKind): Float64Array {
    if (kind === 'run') return (this.runBins ??= new Float64Array(BIN_COUNT));
    return (this.waitBins ??= new Float64Array(BIN_COUNT));
  }

  addCount(index: number, count: number): void {
    this.counts[index]! += count;
  }

  addBin(kind: DurationKind, bin: number, count: number): void {
    this.bins(kind)[bin]! += count;
    if (kind === 'run') this.runCount += count;
    else this.waitCount += count;
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
    for (const kind of ['run', 'wait'] as const) {
      const theirs = kind === 'run' ? other.runBins : other.waitBins;
      if (theirs === null) continue;
      const mine = this.bins(kind);
      for (let bin = 0; bin < BIN_COUNT; bin++) mine[bin]! += theirs[bin]!;
    }
    this.runCount += other.runCount;
    this.waitCount += other.waitCount;
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
    const count = kind === 'run' ? this.runCount : this.waitCount;
    const bins = kind === 'run' ? this.runBins : this.waitBins;
    return bins === null ? null : percentileOfBins(bins, count, permille);
  }

  summary(kind: DurationKind): DurationSummary {
    return {
      count: kind === 'run' ? this.runCount : this.waitCount,
      p50: this.percentile(kind, PERCENTILES.p50),
      p95: this.percentile(kind, PERCENTILES.p95),
      p99: this.percentile(kind, PERCENTILES.p99),
    };
  }

  get isEmpty(): boolean {
    return this.finished === 0 && this.count('retried') === 0 && this.count('cancelled') === 0 && this.runCount === 0 && this.waitCount === 0 && this.gauges[GAUGE.samples] === 0;
  }
}
