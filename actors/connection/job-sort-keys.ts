/** The sort keys of GET /api/jobs and how each is read from a job's row. */
import type { SortValue } from '../jobs/sorted-index.ts';
import type { JobTable } from './job-table.ts';

export const JOB_SORT_KEYS = ['createdAt', 'name', 'state', 'durationMs', 'queue', 'startedAt', 'worker'] as const;
export type JobSortKey = (typeof JOB_SORT_KEYS)[number];

export const JOB_SORT_VALUE: Record<JobSortKey, (table: JobTable, row: number) => SortValue> = {
  createdAt: (table, row) => table.createdAtMsOf(row),
  name: (table, row) => table.nameOf(row),
  state: (table, row) => table.stateOf(row),
  durationMs: (table, row) => table.durationMsOf(row),
  queue: (table, row) => table.queueOf(row),
  startedAt: (table, row) => table.startedAtMsOf(row),
  worker: (table, row) => table.workerOf(row),
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

export function sortValuesOf(table: JobTable, row: number): SortValue[] {
  return JOB_SORT_KEYS.map((key) => JOB_SORT_VALUE[key](table, row));
}
