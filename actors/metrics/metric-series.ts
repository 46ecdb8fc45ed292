/**
 * One series of task metrics (a task in a queue, a queue, or an `(other)` fold): the same
 * measures in every tier. A write goes to each tier that still keeps its time as of the
 * record that carries it, so what a tier holds depends on the log alone.
 */
import { BucketTier, type TierSnapshot } from './bucket-tier.ts';
import { isRecordableTimeMs } from './recordable-time.ts';
import type { OpenBucket } from './open-bucket.ts';
import { SEAL_GRACE_MS, TIER_NAMES, TIER_WIDTH_MS, type TaskMetricsSettings, type TierName } from './metric-tiers.ts';

export interface SeriesSnapshot {
  lastActiveMs: number;
  tiers: Record<TierName, TierSnapshot>;
}

export class MetricSeries {
  readonly tiers: Record<TierName, BucketTier>;
  /** the newest event time recorded: which series are least recently active, when some must fold */
  lastActiveMs = Number.NEGATIVE_INFINITY;

  constructor(tiers?: Record<TierName, BucketTier>) {
    this.tiers = tiers ?? { minute: new BucketTier(TIER_WIDTH_MS.minute), hour: new BucketTier(TIER_WIDTH_MS.hour), day: new BucketTier(TIER_WIDTH_MS.day) };
  }

  /**
   * Applies `write` to the open bucket of `atMs` in every tier whose retention, counted back
   * from `recordAtMs` (the record's own time), reaches it. Times no Date can hold are skipped.
   */
  record(atMs: number, recordAtMs: number, settings: TaskMetricsSettings, write: (bucket: OpenBucket) => void): void {
    if (!isRecordableTimeMs(atMs)) return;
    for (const name of TIER_NAMES) {
      if (atMs < recordAtMs - settings.retentionMs[name]) continue;
      const tier = this.tiers[name];
      write(tier.write(tier.bucketOf(atMs)));
    }
    if (atMs > this.lastActiveMs) this.lastActiveMs = atMs;
  }

  /** Seals what has passed and drops what each tier no longer keeps; true when nothing is left. */
  maintain(nowMs: number, settings: TaskMetricsSettings): boolean {
    let empty = true;
    for (const name of TIER_NAMES) {
      const tier = this.tiers[name];
      tier.seal(tier.bucketOf(nowMs - SEAL_GRACE_MS));
      tier.expire(tier.bucketOf(nowMs - settings.retentionMs[name]));
      if (!tier.isEmpty) empty = false;
    }
    return empty;
  }

  /** Adds every bucket of `other` to this series (it folds into this one). */
  absorb(other: MetricSeries): void {
    for (const name of TIER_NAMES) this.tiers[name].absorb(other.tiers[name]);
    this.lastActiveMs = Math.max(this.lastActiveMs, other.lastActiveMs);
  }

  get byteSize(): number {
    let bytes = 64;
    for (const name of TIER_NAMES) bytes += this.tiers[name].byteSize;
    return bytes;
  }

  toSnapshot(): SeriesSnapshot {
    return {
      lastActiveMs: this.lastActiveMs,
      tiers: { minute: this.tiers.minute.toSnapshot(), hour: this.tiers.hour.toSnapshot(), day: this.tiers.day.toSnapshot() },
    };
  }

  static fromSnapshot(snapshot: SeriesSnapshot): MetricSeries {
    const tiers = {} as Record<TierName, BucketTier>;
    for (const name of TIER_NAMES) {
      const tier = snapshot.tiers?.[name];
      if (tier === undefined) throw new RangeError(`a metrics series in the snapshot has no ${name} tier`);
      tiers[name] = BucketTier.fromSnapshot(TIER_WIDTH_MS[name], tier);
    }
    const series = new MetricSeries(tiers);
    series.lastActiveMs = typeof snapshot.lastActiveMs === 'number' ? snapshot.lastActiveMs : Number.NEGATIVE_INFINITY;
    return series;
  }
}
