/**
 * The job list's filters as they live in the address bar, and the rules for live rows:
 * which arriving jobs belong to the list on screen, and where they go.
 */
import { FRAMEWORKS, JOB_STATES } from '../../../actors/ingest/states.ts';
import type { JobListItem } from '../api/types.ts';

export { FRAMEWORKS, JOB_STATES };
export const JOB_SORT_COLUMNS = ['createdAt', 'name', 'state', 'durationMs', 'queue', 'startedAt', 'worker'] as const;
export type JobSortColumn = (typeof JOB_SORT_COLUMNS)[number];

export interface JobFilters {
  state?: string;
  search?: string;
  queue?: string;
  worker?: string;
  connectionId?: string;
  framework?: string;
  /** the jobs of the workflow this job starts (GET /api/jobs?rootId=) */
  rootId?: string;
  sortBy: JobSortColumn;
  sortOrder: 'asc' | 'desc';
}

export const FILTER_KEYS = ['state', 'search', 'queue', 'worker', 'connectionId', 'framework', 'rootId'] as const;

export function filtersFromQuery(query: URLSearchParams): JobFilters {
  const filters: JobFilters = { sortBy: 'createdAt', sortOrder: 'desc' };
  for (const key of FILTER_KEYS) {
    const value = query.get(key);
    if (value !== null && value !== '') filters[key] = value;
  }
  const sortBy = query.get('sortBy');
  if ((JOB_SORT_COLUMNS as readonly string[]).includes(sortBy ?? '')) filters.sortBy = sortBy as JobSortColumn;
  if (query.get('sortOrder') === 'asc') filters.sortOrder = 'asc';
  return filters;
}

/** The same predicate the service applies (search: case-insensitive substring of the task name). */
export function jobMatches(job: JobListItem, filters: JobFilters): boolean {
  if (filters.state !== undefined && job.state !== filters.state) return false;
  if (filters.queue !== undefined && job.queue !== filters.queue) return false;
  if (filters.worker !== undefined && job.workerId !== filters.worker) return false;
  if (filters.connectionId !== undefined && job.connectionId !== filters.connectionId) return false;
  if (filters.framework !== undefined && job.framework !== filters.framework) return false;
  if (filters.rootId !== undefined && job.rootId !== filters.rootId) return false;
  if (filters.search !== undefined && !job.name.toLowerCase().includes(filters.search.toLowerCase())) return false;
  return true;
}

/** Only the newest-first list by creation time has an obvious place for a new job: the top. */
export function insertsAtTop(filters: JobFilters): boolean {
  return filters.sortBy === 'createdAt' && filters.sortOrder === 'desc';
}

/** Live rows stop going on top past this many rows on screen (the page stays light at any event rate). */
export const LIVE_ROWS_MAX = 500;
/** Waiting jobs kept for the "N new" count; past it the button says "1000+". */
export const WAITING_MAX = 1000;

export interface LiveMerge {
  rows: JobListItem[];
  /** Matching jobs not on screen: shown as "N new" until the user asks for them. */
  waiting: JobListItem[];
  inserted: number;
}

/**
 * Rows already on screen are updated in place (same position, so nothing jumps).
 * A new matching job goes on top when `insert` allows it and the order is newest
 * first; otherwise it waits. Within one batch the last version of a job wins.
 */
export function mergeLiveJobs(rows: JobListItem[], waiting: JobListItem[], incoming: JobListItem[], filters: JobFilters, insert: boolean): LiveMerge {
  const latest = new Map<string, JobListItem>();
  for (const job of incoming) latest.set(job.id, job);
  const position = new Map(rows.map((row, index) => [row.id, index]));
  const nextRows = rows.slice();
  const waitingById = new Map(waiting.map((job) => [job.id, job]));
  const fresh: JobListItem[] = [];
  for (const job of latest.values()) {
    const index = position.get(job.id);
    if (index !== undefined) nextRows[index] = job;
    else if (waitingById.has(job.id)) waitingById.set(job.id, job);
    else if (jobMatches(job, filters)) {
      if (insert && insertsAtTop(filters)) fresh.push(job);
      else waitingById.set(job.id, job);
    }
  }
  fresh.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : -1));
  // past the cap the newest go on top and the rest wait, so the count stays right
  const room = Math.max(0, LIVE_ROWS_MAX - nextRows.length);
  for (const job of fresh.slice(room)) waitingById.set(job.id, job);
  const inserted = fresh.slice(0, room);
  const stillWaiting = [...waitingById.values()].slice(0, WAITING_MAX);
  return { rows: inserted.length === 0 ? nextRows : inserted.concat(nextRows), waiting: stillWaiting, inserted: inserted.length };
}
