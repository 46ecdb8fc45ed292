/**
 * What a command from jobwatch can make the BullMQ agent do: anyone holding the
 * connection's API key can send jobwatch a job under any externalId and then revoke it,
 * so the agent acts only in the queues it watches and only on jobs BullMQ lists there.
 * Real redis-server, a BullMQ app, jobwatch and the agent started with `--queues evil-q`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ingest } from '../../blackbox/service-process.ts';
import { jobEvent } from '../../support/events.ts';
import { eventually, jobDetail, listedJobs, produce, startStack, type Stack } from './harness.ts';

const TEST_MS = 60_000;
let stack: Stack;

const agentLog = () => stack.agent.output;

/** Sends jobwatch a BullMQ job under `externalId` as any holder of the key could, revokes it, and waits for the agent's outcome. */
async function revokeForged(externalId: string, queue: string | null): Promise<{ status: string; reason: string | null }> {
  const event = jobEvent(stack.connection.id, Date.now(), { externalId, queue, name: 'forged' }, { framework: 'bullmq' });
  const reply = await ingest(stack.service.baseUrl, stack.connection.apiKey, [event]);
  expect(reply.body.accepted).toBe(1);
  const job = await eventually(`the forged job ${externalId} listed`, async () => (await listedJobs(stack.service.baseUrl, stack.cookie)).get(externalId));
  const response = await fetch(`${stack.service.baseUrl}/api/jobs/${job.id}/revoke`, { method: 'POST', headers: { cookie: stack.cookie } });
  expect(response.status).toBe(200);
  const detail = await eventually(
    `the agent's outcome for ${externalId}`,
    async () => {
      const found = await jobDetail(stack.service.baseUrl, stack.cookie, externalId);
      return found?.lastCommand?.status !== 'pending' && found?.lastCommand;
    },
    20_000,
    agentLog,
  );
  return detail;
}

beforeAll(async () => {
  // the app's worker consumes neither queue: their jobs wait until the commands reach them
  stack = await startStack('scope', { QUEUES: 'nobody-here', WORKER_NAME: 'w1' }, (redisUrl) =>
    produce(redisUrl, [
      { queue: 'evil-q', name: 'watched-job', opts: { jobId: 'mine-1' } },
      { queue: 'secretq', name: 'secret-job', opts: { jobId: 'secret-1' } },
    ]),
    ['--queues', 'evil-q'],
  );
  await stack.agent.waitFor(/queue evil-q: first seen/, 20_000);
}, TEST_MS);

afterAll(async () => {
  await stack?.stop();
});

describe('the BullMQ agent acts only on what it watches', () => {
  test('a revoke of a job of a queue outside --queues is refused with the reason; the job stays in BullMQ', async () => {
    const outcome = await revokeForged('secretq:secret-1', 'secretq');
    expect(outcome.status).toBe('failed');
    expect(outcome.reason).toContain('queue "secretq" is not watched by this agent (it watches evil-q under prefix bull)');
    expect(await stack.redis.cli('LRANGE', 'bull:secretq:wait', '0', '-1')).toBe('secret-1');
    expect(await stack.redis.cli('EXISTS', 'bull:secretq:secret-1')).toBe('1');
  }, TEST_MS);

  test('the queue a command names must be the one in its job id: a watched queue does not lend its name to another', async () => {
    const outcome = await revokeForged('secretq:secret-1', 'evil-q');
    expect(outcome).toMatchObject({ status: 'failed' });
    expect(outcome.reason).toContain('not a BullMQ job id of this agent');
    expect(await stack.redis.cli('EXISTS', 'bull:secretq:secret-1')).toBe('1');
  }, TEST_MS);

  test("a key of BullMQ's own in a watched queue is no job: refused, untouched", async () => {
    const metaBefore = await stack.redis.cli('HGETALL', 'bull:evil-q:meta');
    const outcome = await revokeForged('evil-q:meta', 'evil-q');
    expect(outcome.status).toBe('failed');
    expect(outcome.reason).toContain('BullMQ lists no job "meta" in any state of queue "evil-q"');
    expect(await stack.redis.cli('HGETALL', 'bull:evil-q:meta')).toBe(metaBefore);
  }, TEST_MS);

  test('a job of a watched queue is revoked: the agent still does its work', async () => {
    const job = await eventually('the watched job listed', async () => (await listedJobs(stack.service.baseUrl, stack.cookie)).get('evil-q:mine-1'), 20_000, agentLog);
    expect((await fetch(`${stack.service.baseUrl}/api/jobs/${job.id}/revoke`, { method: 'POST', headers: { cookie: stack.cookie } })).status).toBe(200);
    await eventually('the watched job removed from BullMQ', async () => (await stack.redis.cli('EXISTS', 'bull:evil-q:mine-1')) === '0', 20_000, agentLog);
    // the agent acknowledges after the removal: the outcome follows
    const command = await eventually(
      'the revoke acknowledged',
      async () => {
        const last = (await jobDetail(stack.service.baseUrl, stack.cookie, 'evil-q:mine-1'))?.lastCommand;
        return last?.status === 'done' && last;
      },
      20_000,
      agentLog,
    );
    expect(command.type).toBe('revoke');
  }, TEST_MS);
});
