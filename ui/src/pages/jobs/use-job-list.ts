/**
 * The job list's data: a cursor-paged list for the filters in the address, the per-state
 * totals for the tabs, and live rows from the stream (updated in place; new ones on top
 * when the list is newest-first, the user is at the top and has not paused; otherwise
 * counted as "N new").
 */
import { signal, type Signal } from '@preact/signals';
import { api, queryString } from '../../api/client.ts';
import { onLive } from '../../api/stream.ts';
import type { JobListItem, JobListPage } from '../../api/types.ts';
import { JOB_STATES, mergeLiveJobs, type JobFilters } from '../../lib/job-filters.ts';

const PAGE_SIZE = 50;
/** Tab totals are refreshed at most this often while events arrive. */
const COUNTS_REFRESH_MS = 2000;
/** Scrolled further than this, new rows wait instead of pushing the rows being read. */
const TOP_OF_PAGE_PX = 80;

export interface JobList {
  rows: Signal<JobListItem[]>;
  waiting: Signal<JobListItem[]>;
  nextCursor: Signal<string | null>;
  total: Signal<number | null>;
  counts: Signal<Record<string, number>>;
  loading: Signal<boolean>;
  error: Signal<unknown>;
  paused: Signal<boolean>;
  reload(): Promise<void>;
  loadMore(): Promise<void>;
  /** Fields of rows changed by this page's own action, before the stream says so. */
  patch(updates: Array<Pick<JobListItem, 'id'> & Partial<JobListItem>>): void;
  dispose(): void;
}

const listQuery = (filters: JobFilters, cursor?: string, limit = PAGE_SIZE) =>
  queryString({ ...filters, cursor, limit });

export function createJobList(filters: JobFilters): JobList {
  const rows = signal<JobListItem[]>([]);
  const waiting = signal<JobListItem[]>([]);
  const nextCursor = signal<string | null>(null);
  const total = signal<number | null>(null);
  const counts = signal<Record<string, number>>({});
  const loading = signal(true);
  const error = signal<unknown>(null);
  const paused = signal(false);
  let generation = 0;
  let countsTimer: ReturnType<typeof setTimeout> | null = null;

  const reload = async () => {
    const mine = ++generation;
    loading.value = true;
    try {
      const page = await api<JobListPage>('GET', `/api/jobs${listQuery(filters)}`);
      if (mine !== generation) return;
      rows.value = page.data;
      waiting.value = [];
      nextCursor.value = page.pagination.nextCursor;
      total.value = page.pagination.total;
      error.value = null;
    } catch (failure) {
      if (mine === generation) error.value = failure;
    } finally {
      if (mine === generation) loading.value = false;
    }
    void refreshCounts();
  };

  /** One cheap request per tab (limit 1): the service sums totals from per-group counts. */
  const refreshCounts = async () => {
    const { state: _state, ...others } = filters;
    const states = ['', ...JOB_STATES];
    const totals = await Promise.all(
      states.map((state) =>
        api<JobListPage>('GET', `/api/jobs${listQuery({ ...others, state: state || undefined }, undefined, 1)}`).then(
          (page) => page.pagination.total,
          () => null,
        ),
      ),
    );
    const next: Record<string, number> = {};
    states.forEach((state, index) => {
      const value = totals[index];
      if (value !== null && value !== undefined) next[state || 'all'] = value;
    });
    counts.value = next;
  };

  const loadMore = async () => {
    const cursor = nextCursor.value;
    if (cursor === null) return;
    const mine = generation;
    loading.value = true;
    try {
      const page = await api<JobListPage>('GET', `/api/jobs${listQuery(filters, cursor)}`);
      if (mine !== generation) return;
      const seen = new Set(rows.value.map((row) => row.id));
      rows.value = rows.value.concat(page.data.filter((row) => !seen.has(row.id)));
      nextCursor.value = page.pagination.nextCursor;
      total.value = page.pagination.total;
    } catch (failure) {
      error.value = failure;
    } finally {
      loading.value = false;
    }
  };

  const stopLive = onLive((batch) => {
    if (batch.reset) return void reload();
    if (batch.jobs.length === 0) return;
    const insert = !paused.value && window.scrollY < TOP_OF_PAGE_PX;
    const merged = mergeLiveJobs(rows.value, waiting.value, batch.jobs, filters, insert);
    if (!paused.value) rows.value = merged.rows;
    waiting.value = merged.waiting;
    if (merged.inserted > 0 && total.value !== null) total.value += merged.inserted;
    countsTimer ??= setTimeout(() => {
      countsTimer = null;
      void refreshCounts();
    }, COUNTS_REFRESH_MS);
  });

  const patch = (updates: Array<Pick<JobListItem, 'id'> & Partial<JobListItem>>) => {
    const byId = new Map(updates.map((update) => [update.id, update]));
    rows.value = rows.value.map((row) => ({ ...row, ...byId.get(row.id) }));
  };

  void reload();
  return {
    rows, waiting, nextCursor, total, counts, loading, error, paused, reload, loadMore, patch,
    dispose() {
      generation++;
      stopLive();
      if (countsTimer !== null) clearTimeout(countsTimer);
    },
  };
}
