/** The sort keys of GET /api/jobs and how each is read from a job. */
import type { SortValue } from '../jobs/sorted-index.ts';
import { durationMsOf, type Job } from './job-record.ts';

export const JOB_SORT_KEYS = ['createdAt', 'name', 'state', 'durationMs', 'queue', 'startedAt', 'worker'] as const;
export type JobSortKey = (typeof JOB_SORT_KEYS)[number];

export const JOB_SORT_VALUE: Record<JobSortKey, (job: Job) => SortValue> = {
  createdAt: (job) => job.createdAtMs,
  name: (job) => job.name,
  state: (job) => job.state,
  durationMs: (job) => durationMsOf(job),
  queue: (job) => job.queue,
  startedAt: (job) => job.startedAtMs,
  worker: (job) => job.workerId,
};

/** What each key's values can be: a cursor whose key is of another type cannot come from this sort. */
const JOB_SORT_VALUE_TYPES: Record<JobSortKey, ReadonlyArray<'number' | 'string' | 'null'>> = {
  createdAt: ['number'],
  name: ['string'],
  state: ['string'],
  durationMs: ['number', 'null'],
  queue: ['string', 'null'],
  startedAt: ['number', 'null'],
  worker: ['string', 'null'],
};

export function isSortValueOf(sortBy: JobSortKey, value: SortValue): boolean {
  return JOB_SORT_VALUE_TYPES[sortBy].includes(value === null ? 'null' : (typeof value as 'number' | 'string'));
}

export function sortValuesOf(job: Job): SortValue[] {
  return JOB_SORT_KEYS.map((key) => JOB_SORT_VALUE[key](job));
}
