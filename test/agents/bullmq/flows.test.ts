/**
 * BullMQ flows end to end: a FlowProducer's parent with four children, one with a child of
 * its own, one child failing, run by a real worker; the agent sends each child's parent
 * (from its `parentKey`) and jobwatch shows the tree, the parent left in
 * `waiting-children`, and why it is stuck.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { getJson } from '../../blackbox/service-process.ts';
import { eventually, listedJobs, produceFlow, startStack, type Stack } from './harness.ts';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack('flows', { QUEUES: 'albums,tracks', WORKER_NAME: 'w1', CONCURRENCY: '5' });
  await stack.agent.waitFor(/watch|queue/i, 20_000);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

test('a flow with a failed child: the tree of parent, four children and a grandchild, the parent waiting on the failed child', async () => {
  const ids = await produceFlow(stack.redis.url, {
    name: 'render-album',
    queueName: 'albums',
    children: [
      { name: 'render-track', queueName: 'tracks', data: { sleepMs: 50 } },
      { name: 'render-track', queueName: 'tracks', data: { sleepMs: 50 }, children: [{ name: 'mix-stems', queueName: 'tracks', data: {} }] },
      { name: 'render-track', queueName: 'tracks', data: { failAttempts: 1 }, opts: { attempts: 1 } },
      { name: 'render-track', queueName: 'tracks', data: { sleepMs: 50 } },
    ],
  });
  const [parent, first, second, grandchild, failing, fourth] = ids as [string, string, string, string, string, string];
  const log = () => stack.agent.output;
  const jobs = await eventually(
    'the flow in jobwatch: children finished, the parent waiting for its children',
    async () => {
      const listed = await listedJobs(stack.service.baseUrl, stack.cookie);
      const finished = [first, second, grandchild, fourth].every((id) => listed.get(id)?.state === 'completed') && listed.get(failing)?.state === 'failed';
      return finished && listed.get(parent)?.state === 'queued' && listed.get(grandchild)?.parentId ? listed : null;
    },
    30_000,
    log,
  );
  const idOf = (externalId: string) => jobs.get(externalId)!.id as string;
  for (const child of [first, second, failing, fourth]) expect(jobs.get(child)).toMatchObject({ parentId: idOf(parent), rootId: idOf(parent) });
  expect(jobs.get(grandchild)).toMatchObject({ parentId: idOf(second), rootId: idOf(parent) });

  const workflow = (await getJson(stack.service.baseUrl, `/api/jobs/${idOf(grandchild)}/workflow`, stack.cookie)).body;
  expect(workflow.rootId).toBe(idOf(parent));
  const shape = workflow.nodes.map((node: any) => [node.externalId, node.depth, node.parentId === null ? null : jobsById(jobs, node.parentId)]);
  expect(shape).toEqual([
    [parent, 0, null],
    ...[first, second, failing, fourth].sort((a, b) => jobs.get(a).createdAt.localeCompare(jobs.get(b).createdAt) || jobs.get(a).id.localeCompare(jobs.get(b).id)).map((child) => [child, 1, parent]),
    [grandchild, 2, second],
  ]);
  expect(workflow.nodes[0]).toMatchObject({ name: 'render-album', nativeState: 'waiting-children', children: 4 });
  expect(workflow.totals).toMatchObject({ queued: 1, completed: 4, failed: 1 });
  expect(workflow.stuck).toEqual([expect.objectContaining({ jobId: idOf(parent), kind: 'waiting_on_failed_child', waitsOn: [idOf(failing)] })]);
  expect(workflow.stuck[0].message).toContain('render-album waits for its children (waiting-children), and a child failed');

  const children = (await getJson(stack.service.baseUrl, `/api/jobs?parentId=${idOf(parent)}&state=failed`, stack.cookie)).body;
  expect(children.data.map((job: any) => job.externalId)).toEqual([failing]);
}, 60_000);

function jobsById(jobs: Map<string, any>, id: string): string {
  for (const [externalId, job] of jobs) if (job.id === id) return externalId;
  return `?${id}`;
}
