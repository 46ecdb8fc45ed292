import { InvalidMetricsSnapshotError } from './invalid-metrics-snapshot-error.ts';
import { TaggedRing, type ChannelKinds } from './tagged-ring.ts';
import { isRecordableTimeMs, slotCountFor } from './recordable-time.ts';
import {
  HOUR_MS,
  MINUTE_MS,
  RANGE_LAYOUTS,
  TIME_RANGES,
  alignedBucketStartMs,
  rangeDurationMs,
  type TimeRange,
} from './time-range.ts';

export { TIME_RANGES, type TimeRange } from './time-range.ts';

/** One health-bar bucket: [start, end) as ISO strings, by completion time. */
export interface HealthBucket {
  start: string;
  end: string;
  succeeded: number;
  failed: number;
}

export interface QueueMetricsView {
  throughput: number | null;
  avgLatencyMs: number | null;
  failureRate: number | null;
  healthBar: { timeRange: TimeRange; buckets: HealthBucket[] };
}

const QUEUE_CHANNELS = {
  succeeded: 'count',
  failed: 'count',
  started: 'count',
  latencyTotalMs: 'total',
} as const satisfies ChannelKinds<string>;

type QueueChannel = keyof typeof QUEUE_CHANNELS;

/**
 * Two resolutions: minutes for the last 24 h (serve 1h, 6h, 24h) and hours for 7 days
 * (serve 7d). Minutes over 7 days would be 10,080 slots a queue; hours alone could not draw
 * the 1-, 5- and 15-minute buckets. Listed finest first.
 */
interface Resolution {
  readonly slotWidthMs: number;
  /** How far back a view may read; the ring is a little longer, see CLOCK_AHEAD_TOLERANCE_MS. */
  readonly retainedMs: number;
  readonly slotCount: number;
}

function resolution(slotWidthMs: number, retainedMs: number): Resolution {
  return { slotWidthMs, retainedMs, slotCount: slotCountFor(retainedMs, slotWidthMs) };
}

const RESOLUTIONS = {
  minutes: resolution(MINUTE_MS, 24 * HOUR_MS),
  hours: resolution(HOUR_MS, 7 * 24 * HOUR_MS),
} as const satisfies Record<string, Resolution>;

type ResolutionName = keyof typeof RESOLUTIONS;

const RESOLUTION_NAMES = Object.keys(RESOLUTIONS) as ResolutionName[];

type QueueRings = Record<ResolutionName, TaggedRing<QueueChannel>>;

/**
 * The finest resolution whose slots tile the range's buckets exactly and whose ring holds
 * the whole range. Decided once per range at load; a throw here means a range was added
 * that no ring can serve.
 */
function resolutionServing(range: TimeRange): ResolutionName {
  const { bucketWidthMs } = RANGE_LAYOUTS[range];
  const name = RESOLUTION_NAMES.find((candidate) => {
    const { slotWidthMs, retainedMs } = RESOLUTIONS[candidate];
    return bucketWidthMs % slotWidthMs === 0 && rangeDurationMs(range) <= retainedMs;
  });
  if (name === undefined) throw new Error(`no metrics resolution can serve time range ${range}`);
  return name;
}

const RESOLUTION_OF_RANGE = Object.fromEntries(
  TIME_RANGES.map((range) => [range, resolutionServing(range)]),
) as Record<TimeRange, ResolutionName>;

function buildRings(ringFor: (name: ResolutionName) => TaggedRing<QueueChannel>): QueueRings {
  return { minutes: ringFor('minutes'), hours: ringFor('hours') };
}

/**
 * Per-queue counters for GET /api/queues: O(1) work per recorded event, and a view of any
 * range without looking at jobs.
 *
 * Choices the decisions leave open, made here:
 * - The measured range is exactly the health bar: its buckets, the oldest first, the last
 *   one containing now. It lasts the range's full duration (1h = 3,600 s), which is the
 *   divisor of `throughput`. Against a sliding [now - duration, now] it leaves out the part
 *   of the oldest bucket before its start and takes in the rest of the current bucket, so
 *   the numbers always agree with the bar.
 * - "Null when there is nothing to measure": `throughput` and `failureRate` are null when no
 *   job finished in the range; `avgLatencyMs` is null when no job started in it. A quiet
 *   queue therefore shows "no data", not "0 jobs/s".
 * - Events are filed by their own time (completion, start), never by arrival. An event ahead
 *   of the clock (the job system's clock may run slightly ahead) is kept in its bucket: in
 *   the current bucket it counts at once, in a later one it counts once now reaches it.
 *   Rings have an hour of spare slots so such events never evict data a view still reads.
 * - Events older than the retained window never show: a view reads only buckets inside its
 *   range (7 days at most), and a ring slot already holding a newer bucket drops them.
 * - A negative latency (producer and worker clocks disagree) counts as 0 ms: the job did not
 *   wait, and dropping it would bias the mean upward.
 * - Times no Date can hold, and non-finite latencies, are ignored rather than thrown on, so
 *   one bad event can never stop replay.
 */
export class QueueMetrics {
  // Replaced wholesale only by fromSnapshot.
  private rings: QueueRings = buildRings((name) => new TaggedRing(RESOLUTIONS[name].slotCount, QUEUE_CHANNELS));

  /** A job of this queue finished (completed or failed) at `completedAtMs`. */
  recordFinished(completedAtMs: number, failed: boolean): void {
    if (!isRecordableTimeMs(completedAtMs)) return;
    this.addAt(completedAtMs, failed ? 'failed' : 'succeeded', 1);
  }

  /** A job of this queue started at `startedAtMs`, having waited `latencyMs` (startedAt - createdAt). */
  recordStarted(startedAtMs: number, latencyMs: number): void {
    if (!isRecordableTimeMs(startedAtMs) || !Number.isFinite(latencyMs)) return;
    this.addAt(startedAtMs, 'started', 1);
    this.addAt(startedAtMs, 'latencyTotalMs', Math.max(0, latencyMs));
  }

  view(range: TimeRange, nowMs: number): QueueMetricsView {
    const { bucketCount, bucketWidthMs } = RANGE_LAYOUTS[range];
    const resolutionName = RESOLUTION_OF_RANGE[range];
    const resolution = RESOLUTIONS[resolutionName];
    const ring = this.rings[resolutionName];
    const slotsPerBucket = bucketWidthMs / resolution.slotWidthMs;
    const oldestStartMs = alignedBucketStartMs(nowMs, bucketWidthMs) - (bucketCount - 1) * bucketWidthMs;
    const oldestSlotBucket = oldestStartMs / resolution.slotWidthMs;

    const buckets: HealthBucket[] = [];
    let succeededInRange = 0;
    let failedInRange = 0;
    for (let index = 0; index < bucketCount; index++) {
      const startMs = oldestStartMs + index * bucketWidthMs;
      const firstSlotBucket = oldestSlotBucket + index * slotsPerBucket;
      const succeeded = ring.sum(firstSlotBucket, slotsPerBucket, 'succeeded');
      const failed = ring.sum(firstSlotBucket, slotsPerBucket, 'failed');
      succeededInRange += succeeded;
      failedInRange += failed;
      buckets.push({
        start: new Date(startMs).toISOString(),
        end: new Date(startMs + bucketWidthMs).toISOString(),
        succeeded,
        failed,
      });
    }

    const slotsInRange = bucketCount * slotsPerBucket;
    const startedInRange = ring.sum(oldestSlotBucket, slotsInRange, 'started');
    const latencyTotalMs = ring.sum(oldestSlotBucket, slotsInRange, 'latencyTotalMs');
    return { ...figures(range, succeededInRange, failedInRange, startedInRange, latencyTotalMs), healthBar: { timeRange: range, buckets } };
  }

  /** The figures of `view` without the health bar: what sorting a queue list needs. */
  summary(range: TimeRange, nowMs: number): Omit<QueueMetricsView, 'healthBar'> {
    const { bucketCount, bucketWidthMs } = RANGE_LAYOUTS[range];
    const resolutionName = RESOLUTION_OF_RANGE[range];
    const { slotWidthMs } = RESOLUTIONS[resolutionName];
    const ring = this.rings[resolutionName];
    const oldestSlotBucket = (alignedBucketStartMs(nowMs, bucketWidthMs) - (bucketCount - 1) * bucketWidthMs) / slotWidthMs;
    const slotsInRange = (bucketCount * bucketWidthMs) / slotWidthMs;
    const succeeded = ring.sum(oldestSlotBucket, slotsInRange, 'succeeded');
    const failed = ring.sum(oldestSlotBucket, slotsInRange, 'failed');
    return figures(range, succeeded, failed, ring.sum(oldestSlotBucket, slotsInRange, 'started'), ring.sum(oldestSlotBucket, slotsInRange, 'latencyTotalMs'));
  }

  /**
   * Jobs finished over the last `windowMs` up to `nowMs`, in whole slots: minutes for a
   * day or less, hours beyond (an alert's failure rate reads this, never the jobs).
   */
  finishedWithin(windowMs: number, nowMs: number): { succeeded: number; failed: number } {
    const name: ResolutionName = windowMs <= RESOLUTIONS.minutes.retainedMs ? 'minutes' : 'hours';
    const { slotWidthMs } = RESOLUTIONS[name];
    const lastSlot = Math.floor(nowMs / slotWidthMs);
    const firstSlot = Math.floor((nowMs - windowMs) / slotWidthMs);
    const ring = this.rings[name];
    const slots = lastSlot - firstSlot + 1;
    return { succeeded: ring.sum(firstSlot, slots, 'succeeded'), failed: ring.sum(firstSlot, slots, 'failed') };
  }

  /** Plain objects and number arrays only, keyed by resolution, ready for msgpack. */
  toSnapshot(): unknown {
    return Object.fromEntries(RESOLUTION_NAMES.map((name) => [name, this.rings[name].toSnapshot()]));
  }

  static fromSnapshot(data: unknown): QueueMetrics {
    if (typeof data !== 'object' || data === null) {
      throw new InvalidMetricsSnapshotError('queue metrics is not an object');
    }
    const ringSnapshots = data as Record<string, unknown>;
    const metrics = new QueueMetrics();
    metrics.rings = buildRings((name) =>
      TaggedRing.fromSnapshot(ringSnapshots[name], RESOLUTIONS[name].slotCount, QUEUE_CHANNELS),
    );
    return metrics;
  }

  private addAt(atMs: number, channel: QueueChannel, amount: number): void {
    for (const name of RESOLUTION_NAMES) {
      this.rings[name].add(Math.floor(atMs / RESOLUTIONS[name].slotWidthMs), channel, amount);
    }
  }
}

function figures(range: TimeRange, succeeded: number, failed: number, started: number, latencyTotalMs: number): Omit<QueueMetricsView, 'healthBar'> {
  const finished = succeeded + failed;
  return {
    throughput: finished === 0 ? null : finished / (rangeDurationMs(range) / 1000),
    avgLatencyMs: started === 0 ? null : latencyTotalMs / started,
    failureRate: finished === 0 ? null : failed / finished,
  };
}
