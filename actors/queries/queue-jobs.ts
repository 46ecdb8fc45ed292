/**
 * What jobwatch knows of a queue's jobs, for its controls: the failed jobs a per-job retry
 * of the whole queue asks for, and how many jobs a clean would remove. Both read the
 * indexes of one state at a time and stop at a bound, so neither walks every job.
 */
import type { CleanParams } from '../connection/command-types.ts';
import type { ConnectionActor } from '../connection/connection-actor.ts';
import type { Queue } from '../connection/queue-store.ts';
import { queueDepth } from '../views/queue-view.ts';

/** Failed jobs one "retry all failed" asks for, when the service asks for each (queue-controls in control-availability.ts). */
export const RETRY_FAILED_JOBS_MAX = 1_000;
/** Finished jobs a clean's estimate looks at before it says "at least". */
export const CLEAN_ESTIMATE_SCAN_MAX = 200_000;

/** The ids of up to `max` failed jobs of the queue, oldest id first; `more`: there are others past the bound. */
export function failedJobIdsOf(actor: ConnectionActor, queueName: string, max = RETRY_FAILED_JOBS_MAX): { ids: string[]; more: boolean } {
  const { table } = actor.jobs;
  const ids: string[] = [];
  for (const row of actor.jobs.rowsIn('failed')) {
    if (table.queueOf(row) !== queueName) continue;
    if (ids.length >= max) return { ids, more: true };
    ids.push(table.id(row));
  }
  return { ids, more: false };
}

export interface CleanEstimate {
  /** jobs the clean would remove, as far as jobwatch knows */
  jobs: number;
  /** the count stopped at its bound: there are at least `jobs` */
  atLeast: boolean;
  /** `jobwatch`: counted from the jobs jobwatch keeps (the job system may hold fewer, or more it never reported); `snapshot`: the queue's depth as the agent last reported it */
  source: 'jobwatch' | 'snapshot';
}

/**
 * How many jobs a clean would remove. `finished`: jobs of the queue in the given states
 * that finished before the cutoff, read oldest created first (a job created after the
 * cutoff cannot have finished before it); `waiting`: the queue's depth.
 */
export function cleanEstimate(actor: ConnectionActor, queue: Queue, params: CleanParams, nowMs: number): CleanEstimate {
  if (params.mode === 'waiting') return { jobs: queueDepth(queue, actor), atLeast: false, source: queue.depth === null ? 'jobwatch' : 'snapshot' };
  const cutoffMs = nowMs - params.olderThanMs;
  const { table } = actor.jobs;
  let jobs = 0;
  let scanned = 0;
  for (const { key, item: row } of actor.jobs.oldestOf(params.states)) {
    if ((key as number) >= cutoffMs) break;
    if (++scanned > CLEAN_ESTIMATE_SCAN_MAX) return { jobs, atLeast: true, source: 'jobwatch' };
    if (table.queueOf(row) !== queue.name) continue;
    const finishedAtMs = table.completedAtMsOf(row) ?? table.lastEventMsOf(row);
    if (finishedAtMs < cutoffMs) jobs++;
  }
  return { jobs, atLeast: false, source: 'jobwatch' };
}
