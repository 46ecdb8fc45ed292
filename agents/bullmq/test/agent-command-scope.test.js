/**
 * What a command from jobwatch can make the BullMQ agent do: anyone holding the
 * connection's API key can send jobwatch a job under any externalId and then revoke it,
 * so the agent acts only in the queues it watches and only on jobs BullMQ lists there.
 * Real redis-server, a BullMQ app, jobwatch and the agent started with `--queues evil-q`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertFields } from './support/fields.js';
import { ingest, jobDetail, jobEvent, listedJobs } from './support/jobwatch.js';
import { produce, startStack } from './support/stack.js';
import { eventually } from './support/wait.js';

const TEST_MS = 60_000;
let stack;

const agentLog = () => stack.agent.output;

/** Sends jobwatch a BullMQ job under `externalId` as any holder of the key could, revokes it, and waits for the agent's outcome. */
async function revokeForged(externalId, queue) {
  const event = jobEvent(stack.connection.id, Date.now(), { externalId, queue, name: 'forged' }, { framework: 'bullmq' });
  const reply = await ingest(stack.service.baseUrl, stack.connection.apiKey, [event]);
  assert.equal(reply.body.accepted, 1);
  const job = await eventually(`the forged job ${externalId} listed`, async () => (await listedJobs(stack.service.baseUrl, stack.cookie)).get(externalId));
  const response = await fetch(`${stack.service.baseUrl}/api/jobs/${job.id}/revoke`, { method: 'POST', headers: { cookie: stack.cookie } });
  assert.equal(response.status, 200);
  const detail = await eventually(
    `the agent's outcome for ${externalId}`,
    async () => {
      const found = await jobDetail(stack.service.baseUrl, stack.cookie, externalId);
      return found?.lastCommand?.status !== 'pending' && found?.lastCommand;
    },
    20_000,
    agentLog
  );
  return detail;
}

before(async () => {
  // the app's worker consumes neither queue: their jobs wait until the commands reach them
  stack = await startStack('scope', { QUEUES: 'nobody-here', WORKER_NAME: 'w1' }, (redisUrl) =>
  produce(redisUrl, [
  { queue: 'evil-q', name: 'watched-job', opts: { jobId: 'mine-1' } },
  { queue: 'secretq', name: 'secret-job', opts: { jobId: 'secret-1' } }]
  ),
  ['--queues', 'evil-q']
  );
  await stack.agent.waitFor(/queue evil-q: first seen/, 20_000);
}, { timeout: TEST_MS });

after(async () => {
  await stack?.stop();
});

describe('the BullMQ agent acts only on what it watches', () => {
  test('a revoke of a job of a queue outside --queues is refused with the reason; the job stays in BullMQ', { timeout: TEST_MS }, async () => {
    const outcome = await revokeForged('secretq:secret-1', 'secretq');
    assert.equal(outcome.status, 'failed');
    assert.ok(outcome.reason.includes('queue "secretq" is not watched by this agent (it watches evil-q under prefix bull)'));
    assert.equal(await stack.redis.cli('LRANGE', 'bull:secretq:wait', '0', '-1'), 'secret-1');
    assert.equal(await stack.redis.cli('EXISTS', 'bull:secretq:secret-1'), '1');
  });

  test('the queue a command names must be the one in its job id: a watched queue does not lend its name to another', { timeout: TEST_MS }, async () => {
    const outcome = await revokeForged('secretq:secret-1', 'evil-q');
    assertFields(outcome, { status: 'failed' });
    assert.ok(outcome.reason.includes('not a BullMQ job id of this agent'));
    assert.equal(await stack.redis.cli('EXISTS', 'bull:secretq:secret-1'), '1');
  });

  test("a key of BullMQ's own in a watched queue is no job: refused, untouched", { timeout: TEST_MS }, async () => {
    const metaBefore = await stack.redis.cli('HGETALL', 'bull:evil-q:meta');
    const outcome = await revokeForged('evil-q:meta', 'evil-q');
    assert.equal(outcome.status, 'failed');
    assert.ok(outcome.reason.includes('BullMQ lists no job "meta" in any state of queue "evil-q"'));
    assert.equal(await stack.redis.cli('HGETALL', 'bull:evil-q:meta'), metaBefore);
  });

  test('a job of a watched queue is revoked: the agent still does its work', { timeout: TEST_MS }, async () => {
    const job = await eventually('the watched job listed', async () => (await listedJobs(stack.service.baseUrl, stack.cookie)).get('evil-q:mine-1'), 20_000, agentLog);
    assert.equal((await fetch(`${stack.service.baseUrl}/api/jobs/${job.id}/revoke`, { method: 'POST', headers: { cookie: stack.cookie } })).status, 200);
    await eventually('the watched job removed from BullMQ', async () => (await stack.redis.cli('EXISTS', 'bull:evil-q:mine-1')) === '0', 20_000, agentLog);
    // the agent acknowledges after the removal: the outcome follows
    const command = await eventually(
      'the revoke acknowledged',
      async () => {
        const last = (await jobDetail(stack.service.baseUrl, stack.cookie, 'evil-q:mine-1'))?.lastCommand;
        return last?.status === 'done' && last;
      },
      20_000,
      agentLog
    );
    assert.equal(command.type, 'revoke');
  });
});
