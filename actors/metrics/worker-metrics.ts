import { isRecordableTimeMs, slotCountFor } from './recordable-time.ts';
import { TaggedRing } from './tagged-ring.ts';
import { MINUTE_MS } from './time-range.ts';

const WINDOW_MINUTES = 60;
const SLOT_COUNT = slotCountFor(WINDOW_MINUTES * MINUTE_MS, MINUTE_MS);

const WORKER_CHANNELS = { finished: 'count' } as const;

/**
 * Jobs a worker finished per minute over a rolling 60-minute window (the Worker `taskRate`),
 * one tagged slot per minute: O(1) per event and under 1.5 KB a worker once it finished a job.
 *
 * The window is whole UTC minutes: the minute containing now and the 59 before it. Jobs are
 * filed by their completion time; one completed ahead of the clock counts once now reaches
 * its minute (at once if it is the current one); the ring has an hour of spare minutes so
 * such a job never evicts one the window still reads. Times no Date can hold are ignored.
 */
export class WorkerRate {
  // Replaced wholesale only by fromSnapshot.
  private ring = new TaggedRing(SLOT_COUNT, WORKER_CHANNELS);

  recordFinished(atMs: number): void {
    if (!isRecordableTimeMs(atMs)) return;
    this.ring.add(Math.floor(atMs / MINUTE_MS), 'finished', 1);
  }

  /** Jobs finished in the last 60 minutes / 60; 0 when there were none. */
  taskRatePerMinute(nowMs: number): number {
    const nowMinute = Math.floor(nowMs / MINUTE_MS);
    const oldestMinute = nowMinute - (WINDOW_MINUTES - 1);
    return this.ring.sum(oldestMinute, WINDOW_MINUTES, 'finished') / WINDOW_MINUTES;
  }

  /** Plain objects and number arrays only, ready for msgpack. */
  toSnapshot(): unknown {
    return this.ring.toSnapshot();
  }

  static fromSnapshot(data: unknown): WorkerRate {
    const rate = new WorkerRate();
    rate.ring = TaggedRing.fromSnapshot(data, SLOT_COUNT, WORKER_CHANNELS);
    return rate;
  }
}
