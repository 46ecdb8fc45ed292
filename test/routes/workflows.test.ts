/**
 * Workflows through the HTTP API: a job names its parent and root by the job system's ids
 * (`parentExternalId`, `rootExternalId`); reads give them as jobwatch ids, in either order
 * of arrival; lists filter by them with every filter, sort and cursor; the workflow route
 * gives the tree, totals and why it is stuck.
 */
import { describe, expect, test } from 'bun:test';
import { JOB_SORT_KEYS } from '../../actors/connection/job-sort-keys.ts';
import { workflowOf } from '../../actors/queries/workflow.ts';
import { iso, jobEvent } from '../support/events.ts';
import { testApp, T0, type TestApp } from '../support/test-app.ts';

const HOUR = 3_600_000;

async function opened() {
  const t = await testApp({ limits: { dailyEventLimit: 0 } });
  const cookie = await t.login();
  const connection = await t.createConnection(cookie, 'prod');
  const get = async (path: string) => {
    const response = await t.request('GET', path, { headers: { cookie } });
    expect(response.status).toBe(200);
    return response.json;
  };
  const byExternalId = (externalId: string) => t.engine.connection(connection.id)!.jobs.getByExternalId(externalId)!;
  return { t, cookie, connection, get, byExternalId };
}

type Opened = Awaited<ReturnType<typeof opened>>;

/** A BullMQ flow: render-album waits for four children, one of which has a child; one child failed. */
function bullmqFlow(connectionId: string) {
  const at = (seconds: number) => T0 + seconds * 1000;
  const bull = (seconds: number, job: Record<string, unknown>) => ({ ...jobEvent(connectionId, at(seconds), { queue: 'albums', ...job }), framework: 'bullmq' });
  return {
    parent: [bull(0, { externalId: 'albums:1', name: 'render-album', state: 'queued', extensions: { bullmqState: 'waiting-children' } })],
    children: [
      ...['2', '3', '4', '5'].map((id, i) => bull(1 + i, { externalId: `albums:${id}`, name: `render-track-${id}`, state: 'completed', parentExternalId: 'albums:1', completedAt: iso(at(10 + i)) })),
      bull(20, { externalId: 'albums:4', name: 'render-track-4', state: 'failed', parentExternalId: 'albums:1', error: 'codec missing' }),
      bull(6, { externalId: 'albums:6', name: 'mix-stems', state: 'completed', parentExternalId: 'albums:3' }),
    ],
  };
}

function shapeOf(workflow: any) {
  return workflow.nodes.map((node: any) => [node.externalId, node.depth, node.parentId, node.edge, node.state]);
}

describe('relations on jobs', () => {
  test('given the parent first or the children first, then the tree, parentId and rootId are the same', async () => {
    const trees: unknown[] = [];
    for (const order of ['parent first', 'children first'] as const) {
      const { t, connection, get, byExternalId } = await opened();
      const flow = bullmqFlow(connection.id);
      const batches = order === 'parent first' ? [flow.parent, flow.children] : [flow.children, flow.parent];
      if (order === 'children first') {
        await t.ingest(connection.apiKey, batches[0]!);
        // a child whose parent has not arrived names no parent yet, and is no workflow's member
        const waiting = await get(`/api/jobs/${byExternalId('albums:2').id}`);
        expect([waiting.parentId, waiting.rootId]).toEqual([null, null]);
        await t.ingest(connection.apiKey, batches[1]!);
      } else {
        for (const batch of batches) await t.ingest(connection.apiKey, batch);
      }
      const parent = byExternalId('albums:1');
      const grandchild = await get(`/api/jobs/${byExternalId('albums:6').id}`);
      expect(grandchild.parentId).toBe(byExternalId('albums:3').id);
      expect(grandchild.rootId).toBe(parent.id);
      const root = await get(`/api/jobs/${parent.id}`);
      expect([root.parentId, root.rootId]).toEqual([null, parent.id]);
      const workflow = await get(`/api/jobs/${grandchild.id}/workflow`);
      expect(workflow.rootId).toBe(parent.id);
      trees.push(shapeOf(workflow).map(([externalId, depth, parentId, edge, state]: any[]) => [externalId, depth, parentId === null ? null : externalIdOf(workflow, parentId), edge, state]));
    }
    expect(trees[0]).toEqual(trees[1]);
    expect(trees[0]).toEqual([
      ['albums:1', 0, null, null, 'queued'],
      ['albums:2', 1, 'albums:1', 'parent', 'completed'],
      ['albums:3', 1, 'albums:1', 'parent', 'completed'],
      ['albums:4', 1, 'albums:1', 'parent', 'failed'],
      ['albums:5', 1, 'albums:1', 'parent', 'completed'],
      ['albums:6', 2, 'albums:3', 'parent', 'completed'],
    ]);
  }, 30_000);

  test('given a flow whose child failed, then the workflow counts each state and says the parent waits on the failed child', async () => {
    const { t, connection, get, byExternalId } = await opened();
    const flow = bullmqFlow(connection.id);
    await t.ingest(connection.apiKey, [...flow.parent, ...flow.children]);
    const workflow = await get(`/api/jobs/${byExternalId('albums:1').id}/workflow`);
    expect(workflow.totals).toMatchObject({ queued: 1, completed: 4, failed: 1, active: 0 });
    expect(workflow.truncated).toBeNull();
    expect(workflow.stuck).toEqual([
      {
        jobId: byExternalId('albums:1').id,
        kind: 'waiting_on_failed_child',
        message: expect.stringContaining('render-album waits for its children (waiting-children), and a child failed: render-track-4 (albums:4)'),
        waitsOn: [byExternalId('albums:4').id],
      },
    ]);
    const parentNode = workflow.nodes[0];
    expect(parentNode).toMatchObject({ nativeState: 'waiting-children', children: 4, missingParentExternalId: null });
  });

  test('given the failed child retried (a new attempt, and a late event of the failed one), then the parent no longer waits on it and the child is timed from its retry', async () => {
    const { t, connection, get, byExternalId } = await opened();
    const flow = bullmqFlow(connection.id);
    await t.ingest(connection.apiKey, [...flow.parent, ...flow.children]);
    const bull = (ms: number, job: Record<string, unknown>) => ({ ...jobEvent(connection.id, ms, { queue: 'albums', externalId: 'albums:4', name: 'render-track-4', parentExternalId: 'albums:1', ...job }), framework: 'bullmq' });
    await t.ingest(connection.apiKey, [bull(T0 + 40_000, { state: 'queued', attempt: 2 })]);
    // the first attempt's failure arrives again, late: it changes neither the state nor the reasons
    await t.ingest(connection.apiKey, [bull(T0 + 25_000, { state: 'failed', attempt: 1, error: 'codec missing' })]);
    let workflow = await get(`/api/jobs/${byExternalId('albums:1').id}/workflow`);
    expect(workflow.totals).toMatchObject({ queued: 2, completed: 4, failed: 0 });
    expect(workflow.stuck).toEqual([]);
    const child = await get(`/api/jobs/${byExternalId('albums:4').id}`);
    expect(child.attempts.map((run: any) => [run.attempt, run.state, run.error])).toEqual([
      [1, 'failed', 'codec missing'],
      [2, 'queued', null],
    ]);
    // queued an hour since its retry, not since it was created (3 s after the parent)
    t.clock.advance(HOUR + 20_000);
    workflow = await get(`/api/jobs/${byExternalId('albums:1').id}/workflow`);
    expect(workflow.stuck).toEqual([]);
    t.clock.advance(30_000);
    workflow = await get(`/api/jobs/${byExternalId('albums:1').id}/workflow`);
    expect(workflow.stuck.map((reason: any) => [reason.kind, externalIdOf(workflow, reason.jobId)])).toEqual([['not_started', 'albums:4']]);
  });

  test('given a Celery chord: group members naming only the root hang under it, a member queued an hour is named as never started', async () => {
    const { t, connection, get, byExternalId } = await opened();
    const celery = (ms: number, job: Record<string, unknown>) => jobEvent(connection.id, ms, job);
    await t.ingest(connection.apiKey, [
      // Celery names a root task as its own root: that is no relation
      celery(T0, { externalId: 'chain-1', name: 'fetch', state: 'completed', rootExternalId: 'chain-1' }),
      celery(T0 + 10, { externalId: 'member-1', name: 'resize', state: 'completed', rootExternalId: 'chain-1', parentExternalId: 'chain-1' }),
      celery(T0 + 11, { externalId: 'member-2', name: 'resize', state: 'queued', rootExternalId: 'chain-1' }),
      celery(T0 + 12, { externalId: 'callback', name: 'combine', state: 'queued', rootExternalId: 'chain-1', parentExternalId: 'member-1' }),
    ]);
    const root = byExternalId('chain-1');
    expect(root.parentExternalId).toBeNull();
    let workflow = await get(`/api/jobs/${byExternalId('callback').id}/workflow`);
    expect(shapeOf(workflow).map((row: any[]) => [row[0], row[1], row[3]])).toEqual([
      ['chain-1', 0, null],
      ['member-1', 1, 'parent'],
      ['member-2', 1, 'root'],
      ['callback', 2, 'parent'],
    ]);
    expect(workflow.stuck).toEqual([]);
    t.clock.advance(HOUR + 1000);
    workflow = await get(`/api/jobs/${root.id}/workflow`);
    // the callback was queued as long, but the job it names as parent has finished: it waits on a worker too
    expect(workflow.stuck.map((reason: any) => [reason.kind, externalIdOf(workflow, reason.jobId)])).toEqual([
      ['not_started', 'member-2'],
      ['not_started', 'callback'],
    ]);
    expect(workflow.stuck[0].message).toContain('never started: no worker took it from queue default');
  });

  test('given a job outside any workflow, then it has no parent or root and its workflow is itself', async () => {
    const { t, connection, get, byExternalId } = await opened();
    await t.ingest(connection.apiKey, [jobEvent(connection.id, T0, { externalId: 'alone' })]);
    const alone = byExternalId('alone');
    expect(await get(`/api/jobs/${alone.id}`)).toMatchObject({ parentId: null, rootId: null });
    const workflow = await get(`/api/jobs/${alone.id}/workflow`);
    expect(shapeOf(workflow)).toEqual([['alone', 0, null, null, 'queued']]);
    expect(workflow.totals.queued).toBe(1);
  });

  test('given a parent removed by retention, then its child names it as missing, never a broken link', async () => {
    const { t, connection, get, byExternalId } = await opened();
    await t.ingest(connection.apiKey, [
      jobEvent(connection.id, T0 - 2 * 86_400_000, { externalId: 'old-parent', state: 'completed' }),
      jobEvent(connection.id, T0, { externalId: 'child', parentExternalId: 'old-parent' }),
    ]);
    expect(byExternalId('child').parentExternalId).toBe('old-parent');
    await t.engine.commit({ t: 'retention', atMs: T0 });
    const child = byExternalId('child');
    expect(await get(`/api/jobs/${child.id}`)).toMatchObject({ parentId: null, rootId: null });
    const workflow = await get(`/api/jobs/${child.id}/workflow`);
    expect(workflow.nodes).toEqual([expect.objectContaining({ externalId: 'child', parentId: null, missingParentExternalId: 'old-parent' })]);
  });

  test('given a chain deeper than 32 levels, then the tree stops at level 32 and says so; given more nodes than the bound, it stops there', async () => {
    const { t, connection, get, byExternalId } = await opened();
    const chain = Array.from({ length: 40 }, (_, i) => jobEvent(connection.id, T0 + i, { externalId: `link-${i}`, ...(i === 0 ? {} : { parentExternalId: `link-${i - 1}` }) }));
    await t.ingest(connection.apiKey, chain);
    const workflow = await get(`/api/jobs/${byExternalId('link-0').id}/workflow`);
    expect(workflow.nodes.length).toBe(33);
    expect(workflow.nodes.at(-1).depth).toBe(32);
    expect(workflow.truncated).toEqual({ reason: 'depth', message: expect.stringContaining('deeper than 32 levels') });
    const store = t.engine.connection(connection.id)!.jobs;
    const cut = workflowOf(store, store.rowOfExternalId('link-0'), T0, 5);
    expect([cut.nodes.length, cut.truncated?.reason]).toEqual([5, 'nodes']);
  });

  test('given an unknown job, then the workflow route answers 404; another team cannot read a workflow', async () => {
    const { t, connection, byExternalId } = await opened();
    await t.ingest(connection.apiKey, [jobEvent(connection.id, T0, { externalId: 'mine' })]);
    const cookie = await t.login();
    expect((await t.request('GET', '/api/jobs/no-such-job/workflow', { headers: { cookie } })).json.error.code).toBe('NOT_FOUND');
    const outsider = await t.userWithSession('outsider@example.com');
    const response = await t.request('GET', `/api/jobs/${byExternalId('mine').id}/workflow`, { headers: { cookie: outsider.cookie } });
    expect([response.status, response.json.error.code]).toEqual([404, 'NOT_FOUND']);
  });

  test('given an event sent again naming a parent it did not name before, then it is applied, not skipped as a duplicate', async () => {
    const { t, connection, byExternalId } = await opened();
    await t.ingest(connection.apiKey, [jobEvent(connection.id, T0, { externalId: 'child' })]);
    const again = await t.ingest(connection.apiKey, [jobEvent(connection.id, T0, { externalId: 'child', parentExternalId: 'parent' })]);
    expect([again.json.accepted, again.json.skipped ?? 0]).toEqual([1, 0]);
    expect(byExternalId('child').parentExternalId).toBe('parent');
    const repeat = await t.ingest(connection.apiKey, [jobEvent(connection.id, T0, { externalId: 'child', parentExternalId: 'parent' })]);
    expect(repeat.json.accepted).toBe(0);
  });

  test('given an older client naming the parent and root in extensions only, then they are read as the relations', async () => {
    const { t, connection, get, byExternalId } = await opened();
    await t.ingest(connection.apiKey, [
      jobEvent(connection.id, T0, { externalId: 'first' }),
      jobEvent(connection.id, T0 + 1, { externalId: 'second', extensions: { parentId: 'first', rootId: 'first' } }),
    ]);
    expect(await get(`/api/jobs/${byExternalId('second').id}`)).toMatchObject({ parentId: byExternalId('first').id, rootId: byExternalId('first').id, extensions: { parentId: 'first' } });
  });

  test('given a parent id longer than an externalId may be, then the event is refused naming the field', async () => {
    const { t, connection } = await opened();
    const reply = await t.ingest(connection.apiKey, [jobEvent(connection.id, T0, { externalId: 'child', parentExternalId: 'p'.repeat(513) })]);
    expect(reply.json.accepted).toBe(0);
    expect(JSON.stringify(reply.json)).toContain('job.parentExternalId');
  });
});

describe('lists by parent and root', () => {
  async function seeded() {
    const o = await opened();
    const events = [jobEvent(o.connection.id, T0, { externalId: 'root', name: 'root' })];
    for (let i = 0; i < 30; i++) {
      events.push(
        jobEvent(o.connection.id, T0 + 1000 + ((i * 7919) % 5000), {
          externalId: `child-${i}`,
          name: ['a', 'b', 'c'][i % 3],
          state: ['queued', 'active', 'completed', 'failed'][i % 4],
          queue: i % 5 === 0 ? null : `q${i % 2}`,
          parentExternalId: i < 20 ? 'root' : `child-${i - 20}`,
          startedAt: i % 4 === 0 ? null : iso(T0 + 2000 + i),
          completedAt: i % 4 >= 2 ? iso(T0 + 3000 + ((i * 31) % 900)) : null,
        }),
      );
    }
    // a job of another workflow, never listed
    events.push(jobEvent(o.connection.id, T0, { externalId: 'other-root' }), jobEvent(o.connection.id, T0, { externalId: 'other-child', parentExternalId: 'other-root' }));
    await o.t.ingest(o.connection.apiKey, events);
    return o;
  }

  async function walk(o: Opened, params: Record<string, string>) {
    const items: any[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 100; pages++) {
      const query: string = new URLSearchParams({ ...params, limit: '7', ...(cursor === null ? {} : { cursor }) }).toString();
      const page = await o.get(`/api/jobs?${query}`);
      items.push(...page.data);
      expect(page.pagination.total).toBe(items.length + (page.pagination.nextCursor === null ? 0 : page.pagination.total - items.length));
      cursor = page.pagination.nextCursor;
      if (cursor === null) return { items, total: page.pagination.total };
    }
    throw new Error('pagination did not end');
  }

  test('given every sort key and both orders, then a parent\'s children are listed whole, in order, once each, filters applied', async () => {
    const o = await seeded();
    const root = o.byExternalId('root');
    const all = await o.get(`/api/jobs?limit=100`);
    const childrenOfRoot = all.data.filter((job: any) => job.parentId === root.id);
    expect(childrenOfRoot.length).toBe(20);
    for (const sortBy of JOB_SORT_KEYS) {
      for (const sortOrder of ['asc', 'desc']) {
        const { items, total } = await walk(o, { parentId: root.id, sortBy, sortOrder });
        // the same order the unfiltered list gives, restricted to the children
        const expected = (await o.get(`/api/jobs?limit=100&sortBy=${sortBy}&sortOrder=${sortOrder}`)).data.filter((job: any) => job.parentId === root.id);
        expect(items.map((job: any) => job.externalId)).toEqual(expected.map((job: any) => job.externalId));
        expect(total).toBe(20);
      }
    }
    const failed = await walk(o, { parentId: root.id, state: 'failed', search: 'A' });
    expect(failed.items.map((job: any) => job.externalId).sort()).toEqual(childrenOfRoot.filter((job: any) => job.state === 'failed' && job.name === 'a').map((job: any) => job.externalId).sort());
  });

  test('given rootId, then the whole workflow is listed, the root included; a job that is not a root lists nothing', async () => {
    const o = await seeded();
    const root = o.byExternalId('root');
    const { items, total } = await walk(o, { rootId: root.id, sortBy: 'name', sortOrder: 'asc' });
    expect(total).toBe(31);
    expect(new Set(items.map((job: any) => job.externalId))).toEqual(new Set(['root', ...Array.from({ length: 30 }, (_, i) => `child-${i}`)]));
    expect(items.every((job: any) => job.rootId === root.id)).toBe(true);
    const grandchildren = await walk(o, { rootId: root.id, parentId: o.byExternalId('child-0').id });
    expect(grandchildren.items.map((job: any) => job.externalId)).toEqual(['child-20']);
    expect((await walk(o, { rootId: o.byExternalId('child-0').id })).total).toBe(0);
    expect((await walk(o, { parentId: 'no-such-job' })).total).toBe(0);
  });
});

function externalIdOf(workflow: any, id: string): string {
  return workflow.nodes.find((node: any) => node.id === id)?.externalId ?? `?${id}`;
}
