/**
 * The byte budgets of one connection, judged event by event while a batch is decided:
 * - memory: estimated bytes of retained jobs (JobStore.retainedBytes) may not pass
 *   CONNECTION_MEMORY_MB. Past it, an event that would add to a job is refused with
 *   STORAGE_LIMIT_EXCEEDED; nothing already stored is evicted, so no accepted data is
 *   lost silently. Retention (or deleting the connection) frees room.
 * - daily: estimated bytes of accepted events per UTC day may not pass DAILY_INGEST_MB;
 *   an event that would pass it is refused with DAILY_BYTES_EXCEEDED until midnight UTC.
 * Worker and queue events add nothing to the memory estimate: their counts are bounded.
 */
import { nextUtcMidnightMs } from '../clock.ts';
import { eventBytes, jobGrowthBytes } from '../ingest/event-bytes.ts';
import type { NormalizedEvent } from '../ingest/normalized-event.ts';
import type { EventError } from '../ingest/validate-event.ts';
import type { ConnectionActor } from './connection-actor.ts';

const MB = 1024 * 1024;
const inMb = (bytes: number): string => `${(bytes / MB).toFixed(1)} MB`;

export class BatchBudget {
  private retainedBytes: number;
  private dailyBytes: number;
  private readonly newJobs = new Set<string>();

  constructor(
    private readonly actor: Pick<ConnectionActor, 'jobs' | 'quota' | 'tenantLimits'>,
    private readonly nowMs: number,
  ) {
    this.retainedBytes = actor.jobs.retainedBytes;
    this.dailyBytes = actor.quota.bytesUsed(nowMs);
  }

  /** Why the event does not fit a budget, or null; when null the event is counted as accepted. */
  admit(event: NormalizedEvent): EventError | null {
    const { connectionMemoryBytesMax, dailyIngestBytesMax } = this.actor.tenantLimits;
    const bytes = eventBytes(event);
    if (dailyIngestBytesMax > 0 && this.dailyBytes + bytes > dailyIngestBytesMax) {
      return {
        code: 'DAILY_BYTES_EXCEEDED',
        message: `the connection's daily ingest budget (DAILY_INGEST_MB, ${inMb(dailyIngestBytesMax)}) is used up (${inMb(this.dailyBytes)} accepted today); it resets at ${new Date(nextUtcMidnightMs(this.nowMs)).toISOString()}`,
      };
    }
    let growth = 0;
    if (event.kind === 'job') {
      const isNewJob = this.actor.jobs.rowOfExternalId(event.externalId) < 0 && !this.newJobs.has(event.externalId);
      growth = jobGrowthBytes(event, isNewJob);
      if (connectionMemoryBytesMax > 0 && this.retainedBytes + growth > connectionMemoryBytesMax) {
        return {
          code: 'STORAGE_LIMIT_EXCEEDED',
          message: `the connection's retained jobs are at their memory budget (CONNECTION_MEMORY_MB, ${inMb(connectionMemoryBytesMax)}; ${inMb(this.retainedBytes)} estimated); the event was not stored. Room is freed as jobs pass retention`,
        };
      }
      if (isNewJob) this.newJobs.add(event.externalId);
    }
    this.dailyBytes += bytes;
    this.retainedBytes += growth;
    return null;
  }
}
