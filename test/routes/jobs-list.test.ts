import { describe, expect, test } from 'bun:test';
import { JOB_SORT_KEYS } from '../../actors/connection/job-sort-keys.ts';
import { testApp, T0, type TestApp } from '../support/test-app.ts';
import { iso, jobEvent } from '../support/events.ts';

const STATES = ['queued', 'active', 'completed', 'failed'];
const NAMES = ['tasks.Send_Email', 'tasks.resize', 'reports.daily'];

/** 60 jobs with varied fields (some nulls) in one connection. */
async function seeded() {
  const t = await testApp({ limits: { dailyEventLimit: 0 } });
  const cookie = await t.login();
  const connection = await t.createConnection(cookie, 'prod');
  const events = Array.from({ length: 60 }, (_, i) => {
    const started = i % 4 !== 0;
    const completed = i % 3 === 0 && started;
    return jobEvent(connection.id, T0 + i * 1000, {
      externalId: `job-${String(i).padStart(3, '0')}`,
      name: NAMES[i % 3],
      queue: i % 5 === 0 ? null : `q${i % 2}`,
      state: STATES[i % 4],
      workerId: i % 6 === 0 ? null : `w${i % 3}`,
      startedAt: started ? iso(T0 + i * 1000 + 100) : null,
      completedAt: completed ? iso(T0 + i * 1000 + 100 + ((i * 7919) % 5000)) : null,
    });
  });
  expect((await t.ingest(connection.apiKey, events)).json.accepted).toBe(60);
  return { t, cookie, connection };
}

async function list(t: TestApp, cookie: string, params: Record<string, string | number>) {
  const query = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();
  return t.request('GET', `/api/jobs?${query}`, { headers: { cookie } });
}

/** Follows nextCursor to the end and returns every item. */
async function walk(t: TestApp, cookie: string, params: Record<string, string | number>) {
  const items: any[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 1000; pages++) {
    const response = await list(t, cookie, cursor === null ? params : { ...params, cursor });
    expect(response.status).toBe(200);
    items.push(...response.json.data);
    cursor = response.json.pagination.nextCursor;
    if (cursor === null) return items;
  }
  throw new Error('pagination did not end');
}

const SORT_FIELD: Record<string, string> = { worker: 'workerId' };
const valueOf = (item: any, sortBy: string) => {
  const value = item[SORT_FIELD[sortBy] ?? sortBy];
  return typeof value === 'string' && sortBy.endsWith('At') ? Date.parse(value) : value;
};

/** The order the decisions define: by value, nulls last in both orders, ties by id. */
function expectedOrder(items: any[], sortBy: string, order: 'asc' | 'desc') {
  const sign = order === 'asc' ? 1 : -1;
  return [...items].sort((a, b) => {
    const x = valueOf(a, sortBy);
    const y = valueOf(b, sortBy);
    if (x === null || y === null) {
      if (x !== y) return x === null ? 1 : -1;
      return sign * (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    }
    const byValue = x < y ? -1 : x > y ? 1 : 0;
    return sign * (byValue || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  });
}

describe('GET /api/jobs sorting and pagination', () => {
  for (const sortBy of JOB_SORT_KEYS) {
    for (const sortOrder of ['asc', 'desc'] as const) {
      test(`sortBy=${sortBy}&sortOrder=${sortOrder}: pages of 7 walk every job once in order, nulls last`, async () => {
        const { t, cookie } = await seeded();
        const items = await walk(t, cookie, { sortBy, sortOrder, limit: 7 });
        expect(items).toHaveLength(60);
        expect(new Set(items.map((item) => item.id)).size).toBe(60);
        expect(items.map((item) => item.id)).toEqual(expectedOrder(items, sortBy, sortOrder).map((item) => item.id));
      });
    }
  }

  test('defaults: sortBy=createdAt desc, limit 50, total counts all', async () => {
    const { t, cookie } = await seeded();
    const response = await list(t, cookie, {});
    expect(response.json.data).toHaveLength(50);
    expect(response.json.data[0].externalId).toBe('job-059');
    expect(response.json.pagination).toMatchObject({ limit: 50, total: 60 });
    expect(typeof response.json.pagination.nextCursor).toBe('string');
  });

  test("the list item has exactly the interface fields, the job's latest revoke or retry (null when none), and progress (beyond V0, for the list's bar); no arguments, result, log or attempts", async () => {
    const { t, cookie } = await seeded();
    const [item] = (await list(t, cookie, { limit: 1, sortBy: 'createdAt', sortOrder: 'asc' })).json.data;
    expect(Object.keys(item).sort()).toEqual(
      ['id', 'externalId', 'framework', 'connectionId', 'name', 'queue', 'state', 'stateChangedAt', 'scheduledFor', 'createdAt', 'startedAt', 'completedAt', 'durationMs', 'workerId', 'error', 'parentId', 'rootId', 'lastCommand', 'progress'].sort(),
    );
    expect(item.lastCommand).toBeNull();
    expect(item.createdAt).toBe('2026-11-21T10:00:00.000Z');
  });
});

describe('GET /api/jobs filters', () => {
  test('each filter narrows the list and total; search is a case-insensitive substring of the name', async () => {
    const { t, cookie, connection } = await seeded();
    const cases: Array<[Record<string, string>, (item: any) => boolean]> = [
      [{ state: 'failed' }, (item) => item.state === 'failed'],
      [{ queue: 'q1' }, (item) => item.queue === 'q1'],
      [{ worker: 'w2' }, (item) => item.workerId === 'w2'],
      [{ framework: 'celery' }, () => true],
      [{ framework: 'sidekiq' }, () => false],
      [{ search: 'SEND_e' }, (item) => item.name === 'tasks.Send_Email'],
      [{ search: 'tasks', state: 'active', queue: 'q1' }, (item) => item.name.startsWith('tasks') && item.state === 'active' && item.queue === 'q1'],
      [{ connectionId: connection.id }, () => true],
    ];
    const all = await walk(t, cookie, { limit: 100 });
    for (const [filters, predicate] of cases) {
      const expected = all.filter(predicate);
      const items = await walk(t, cookie, { ...filters, limit: 4 });
      expect(items.map((item) => item.id).sort()).toEqual(expected.map((item) => item.id).sort());
      expect((await list(t, cookie, filters)).json.pagination.total).toBe(expected.length);
    }
  });
});

describe('GET /api/jobs parameter validation', () => {
  const bad: Array<[Record<string, string>, string]> = [
    [{ limit: '0' }, 'limit'],
    [{ limit: '101' }, 'limit'],
    [{ limit: 'ten' }, 'limit'],
    [{ sortBy: 'bogus' }, 'sortBy'],
    [{ sortOrder: 'up' }, 'sortOrder'],
    [{ state: 'SUCCESS' }, 'state'],
    [{ framework: 'resque' }, 'framework'],
    [{ cursor: 'x'.repeat(1001) }, 'cursor'],
    [{ search: 's'.repeat(501) }, 'search'],
    [{ cursor: 'not-a-cursor' }, 'cursor'],
  ];
  for (const [params, field] of bad) {
    test(`${JSON.stringify(params).slice(0, 60)} is a 400 naming ${field}`, async () => {
      const { t, cookie } = await seeded();
      const response = await list(t, cookie, params);
      expect(response.status).toBe(400);
      expect(response.json.error.code).toBe('VALIDATION_ERROR');
      expect(Object.keys(response.json.error.details)).toEqual([field]);
    });
  }

  test('edges pass: limit 1 and 100, a 500-char search, unknown parameters ignored', async () => {
    const { t, cookie } = await seeded();
    expect((await list(t, cookie, { limit: 1 })).json.data).toHaveLength(1);
    expect((await list(t, cookie, { limit: 100 })).json.data).toHaveLength(60);
    expect((await list(t, cookie, { search: 's'.repeat(500) })).status).toBe(200);
    expect((await list(t, cookie, { whatever: 'x' })).status).toBe(200);
  });

  test('a cursor used with another sortBy or sortOrder is a 400 on cursor', async () => {
    const { t, cookie } = await seeded();
    const cursor = (await list(t, cookie, { sortBy: 'name', sortOrder: 'asc', limit: 5 })).json.pagination.nextCursor;
    for (const params of [{ sortBy: 'state', sortOrder: 'asc' }, { sortBy: 'name', sortOrder: 'desc' }]) {
      const response = await list(t, cookie, { ...params, cursor });
      expect(response.status).toBe(400);
      expect(Object.keys(response.json.error.details)).toEqual(['cursor']);
    }
  });
});

describe('GET /api/jobs consistency while events arrive', () => {
  test('walking pages while new jobs arrive and existing ones change repeats nothing and skips nothing that existed', async () => {
    const { t, cookie, connection } = await seeded();
    const before = new Set((await walk(t, cookie, { limit: 100 })).map((item) => item.id));
    for (const [sortBy, sortOrder] of [['createdAt', 'desc'], ['name', 'asc'], ['state', 'asc']] as const) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let round = 0;
      do {
        const response = await list(t, cookie, cursor === null ? { sortBy, sortOrder, limit: 6 } : { sortBy, sortOrder, limit: 6, cursor });
        seen.push(...response.json.data.map((item: any) => item.id));
        cursor = response.json.pagination.nextCursor;
        // Between pages: new jobs at both ends of every order (some before, some after the cursor).
        round++;
        await t.ingest(connection.apiKey, [
          jobEvent(connection.id, T0 - round * 1000, { externalId: `early-${sortBy}-${round}`, name: 'aaa', state: 'active' }),
          jobEvent(connection.id, T0 + 10_000_000 + round, { externalId: `late-${sortBy}-${round}`, name: 'zzz', state: 'unknown' }),
        ]);
      } while (cursor !== null);
      expect(new Set(seen).size).toBe(seen.length);
      for (const id of before) expect(seen).toContain(id);
    }
  });
});
