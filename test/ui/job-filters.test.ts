import { describe, expect, test } from 'bun:test';
import { filtersFromQuery, jobMatches, LIVE_ROWS_MAX, mergeLiveJobs } from '../../ui/src/lib/job-filters.ts';
import type { JobListItem } from '../../ui/src/api/types.ts';

const job = (id: string, fields: Partial<JobListItem> = {}): JobListItem => ({
  id,
  externalId: `ext-${id}`,
  framework: 'celery',
  connectionId: 'c1',
  name: 'tasks.send_email',
  queue: 'default',
  state: 'queued',
  stateChangedAt: null,
  scheduledFor: null,
  createdAt: `2026-11-21T10:00:0${id.length}.000Z`,
  startedAt: null,
  completedAt: null,
  durationMs: null,
  workerId: null,
  error: null,
  parentId: null,
  rootId: null,
  progress: null,
  lastCommand: null,
  ...fields,
});

describe('job list filters in the address', () => {
  test('known keys are read, unknown sort keys fall back to newest first', () => {
    const filters = filtersFromQuery(new URLSearchParams('state=failed&search=Email&sortBy=bogus&queue='));
    expect(filters).toEqual({ state: 'failed', search: 'Email', sortBy: 'createdAt', sortOrder: 'desc' });
  });

  test('search is a case-insensitive substring of the task name, like the service', () => {
    const filters = filtersFromQuery(new URLSearchParams('search=SEND'));
    expect(jobMatches(job('a'), filters)).toBe(true);
    expect(jobMatches(job('a', { name: 'tasks.resize' }), filters)).toBe(false);
    expect(jobMatches(job('a', { workerId: 'w1' }), filtersFromQuery(new URLSearchParams('worker=w2')))).toBe(false);
  });

  test('a workflow filter keeps the live jobs of that root only, like the service', () => {
    const filters = filtersFromQuery(new URLSearchParams('rootId=r1'));
    expect(filters.rootId).toBe('r1');
    expect(jobMatches(job('a', { rootId: 'r1' }), filters)).toBe(true);
    expect(jobMatches(job('b', { rootId: 'r2' }), filters)).toBe(false);
    expect(jobMatches(job('c'), filters)).toBe(false);
  });
});

describe('live rows', () => {
  const newestFirst = filtersFromQuery(new URLSearchParams(''));

  test('a row on screen is updated where it is; a new match goes on top', () => {
    const rows = [job('b'), job('a')];
    const merged = mergeLiveJobs(rows, [], [job('a', { state: 'active' }), job('ccc')], newestFirst, true);
    expect(merged.rows.map((row) => [row.id, row.state])).toEqual([['ccc', 'queued'], ['b', 'queued'], ['a', 'active']]);
    expect(merged.inserted).toBe(1);
  });

  test('paused, or sorted otherwise: new matches wait and are counted once', () => {
    const first = mergeLiveJobs([job('a')], [], [job('bb'), job('bb', { state: 'active' })], newestFirst, false);
    expect(first.rows.map((row) => row.id)).toEqual(['a']);
    expect(first.waiting.map((row) => [row.id, row.state])).toEqual([['bb', 'active']]);
    const byName = filtersFromQuery(new URLSearchParams('sortBy=name&sortOrder=asc'));
    const second = mergeLiveJobs([job('a')], first.waiting, [job('bb', { state: 'completed' }), job('ccc')], byName, true);
    expect(second.waiting.map((row) => [row.id, row.state])).toEqual([['bb', 'completed'], ['ccc', 'queued']]);
  });

  test('a job that does not match the filters is not added', () => {
    const failedOnly = filtersFromQuery(new URLSearchParams('state=failed'));
    const merged = mergeLiveJobs([], [], [job('a')], failedOnly, true);
    expect(merged.rows).toEqual([]);
    expect(merged.waiting).toEqual([]);
  });

  test('past the cap of rows on screen, new jobs wait instead of growing the page', () => {
    const onScreen = Array.from({ length: LIVE_ROWS_MAX - 1 }, (_, i) => job(`r${i}`));
    const merged = mergeLiveJobs(onScreen, [], [job('new-1', { createdAt: '2026-11-21T11:00:00.000Z' }), job('new-2', { createdAt: '2026-11-21T11:00:01.000Z' })], newestFirst, true);
    expect(merged.rows.length).toBe(LIVE_ROWS_MAX);
    expect(merged.rows[0]!.id).toBe('new-2');
    expect(merged.waiting.map((row) => row.id)).toEqual(['new-1']);
    expect(merged.inserted).toBe(1);
  });
});
