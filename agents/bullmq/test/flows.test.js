/**
 * BullMQ flows end to end: a FlowProducer's parent with four children, one with a child of
 * its own, one child failing, run by a real worker; the agent sends each child's parent
 * (from its `parentKey`) and jobwatch shows the tree, the parent left in
 * `waiting-children`, and why it is stuck.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { getJson, listedJobs } from './support/jobwatch.js';
import { produceFlow, startStack } from './support/stack.js';
import { eventually } from './support/wait.js';

let stack;

before(async () => {
  stack = await startStack('flows', { QUEUES: 'albums,tracks', WORKER_NAME: 'w1', CONCURRENCY: '5' });
});

after(async () => {
  await stack?.stop();
});

test('a flow with a failed child: the tree of parent, four children and a grandchild, the parent waiting on the failed child', { timeout: 60_000 }, async () => {
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
  const [parent, first, second, grandchild, failing, fourth] = ids;
  const jobs = await eventually(
    'the flow in jobwatch: children finished, the parent waiting for its children',
    async () => {
      const listed = await listedJobs(stack.service.baseUrl, stack.cookie);
      const finished = [first, second, grandchild, fourth].every((id) => listed.get(id)?.state === 'completed') && listed.get(failing)?.state === 'failed';
      return finished && listed.get(parent)?.state === 'queued' && listed.get(grandchild)?.parentId ? listed : null;
    },
    30_000,
    () => stack.agent.output,
  );
  const idOf = (externalId) => jobs.get(externalId).id;
  const externalIdOf = (id) => [...jobs.values()].find((job) => job.id === id)?.externalId ?? `?${id}`;
  for (const child of [first, second, failing, fourth]) assert.deepEqual([jobs.get(child).parentId, jobs.get(child).rootId], [idOf(parent), idOf(parent)]);
  assert.deepEqual([jobs.get(grandchild).parentId, jobs.get(grandchild).rootId], [idOf(second), idOf(parent)]);

  const workflow = (await getJson(stack.service.baseUrl, `/api/jobs/${idOf(grandchild)}/workflow`, stack.cookie)).body;
  assert.equal(workflow.rootId, idOf(parent));
  const byCreation = [first, second, failing, fourth].sort((a, b) => jobs.get(a).createdAt.localeCompare(jobs.get(b).createdAt) || jobs.get(a).id.localeCompare(jobs.get(b).id));
  assert.deepEqual(
    workflow.nodes.map((node) => [node.externalId, node.depth, node.parentId === null ? null : externalIdOf(node.parentId)]),
    [[parent, 0, null], ...byCreation.map((child) => [child, 1, parent]), [grandchild, 2, second]],
  );
  assert.deepEqual([workflow.nodes[0].name, workflow.nodes[0].nativeState, workflow.nodes[0].children], ['render-album', 'waiting-children', 4]);
  assert.deepEqual([workflow.totals.queued, workflow.totals.completed, workflow.totals.failed], [1, 4, 1]);
  assert.deepEqual(workflow.stuck.map((reason) => [reason.jobId, reason.kind, reason.waitsOn]), [[idOf(parent), 'waiting_on_failed_child', [idOf(failing)]]]);
  assert.match(workflow.stuck[0].message, /render-album waits for its children \(waiting-children\), and a child failed/);

  const children = (await getJson(stack.service.baseUrl, `/api/jobs?parentId=${idOf(parent)}&state=failed`, stack.cookie)).body;
  assert.deepEqual(children.data.map((job) => job.externalId), [failing]);
});
