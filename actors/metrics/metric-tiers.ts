/**
 * The tiers task metrics are kept in: minutes, hours and days, each for its own time
 * (configurable: METRICS_*_RETENTION, docs/configuration.md). The widths are fixed: they are
 * the bucket numbers stored in snapshots. Listed finest first.
 */
import { HOUR_MS, MINUTE_MS } from './time-range.ts';

export const DAY_MS = 24 * HOUR_MS;

export const TIER_NAMES = ['minute', 'hour', 'day'] as const;
export type TierName = (typeof TIER_NAMES)[number];

export const TIER_WIDTH_MS: Readonly<Record<TierName, number>> = { minute: MINUTE_MS, hour: HOUR_MS, day: DAY_MS };

export interface TaskMetricsSettings {
  /** how long each tier keeps its buckets */
  retentionMs: Readonly<Record<TierName, number>>;
  /** task series ((task, queue) pairs) and queue series kept per connection; past it the least recently active fold into `(other)` */
  seriesMax: number;
}

export const TASK_METRICS_DEFAULTS: TaskMetricsSettings = {
  retentionMs: { minute: 48 * HOUR_MS, hour: 90 * DAY_MS, day: 730 * DAY_MS },
  seriesMax: 500,
};

/**
 * How long after its period an open bucket is sealed: events reach us a little after they
 * happen (an agent batches for a second or two). One that comes later still is kept (see
 * bucket-tier.ts); this only saves the rebuild it costs.
 */
export const SEAL_GRACE_MS = 2 * MINUTE_MS;

/** The oldest time a tier still answers for at `nowMs`: its buckets from the one holding this instant on. */
export function tierHorizonMs(settings: TaskMetricsSettings, tier: TierName, nowMs: number): number {
  return nowMs - settings.retentionMs[tier];
}
