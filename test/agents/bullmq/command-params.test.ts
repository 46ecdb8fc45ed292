/**
 * What the BullMQ agent reads of a command before it touches Redis: a queue's name, a
 * queue command's params, a command type it does not carry out (unsupported, with the
 * reason it reported at its start), and the capabilities it reports.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { bullmqControls } from '../../../agents/bullmq/src/capabilities.js';
import { setLogLevel } from '../../../agents/bullmq/src/log.js';
import { CommandRunner, queueNameRefusal } from '../../../agents/bullmq/src/commands.js';
import { queueParamsOf } from '../../../agents/bullmq/src/queue-commands.js';
import { COMMAND_TYPES } from '../../../actors/connection/command-types.ts';

// the outcomes are asserted; their log lines are the e2e tests' concern (and the level is the process's: put back after)
beforeAll(() => setLogLevel('ERROR'));
afterAll(() => setLogLevel('INFO'));

/** A runner with no Redis and no jobwatch: what it answers here, it answers without either. */
function offlineRunner(): CommandRunner {
  const redis = { status: 'end' } as never;
  const client = { get: () => Promise.reject(new Error('no jobwatch here')) } as never;
  return new CommandRunner(redis, 'bull', client, (queue: string) => queue === 'mail', 'it watches mail under prefix bull');
}

describe('queue names and params', () => {
  test('a queue name is 1 to 255 characters without control characters or colons', () => {
    expect(queueNameRefusal('mail')).toBeNull();
    for (const name of ['', 'a:b', 'ma\nil', 'q'.repeat(256), 7, null]) expect(queueNameRefusal(name)).toContain('not a BullMQ queue name');
  });

  test("a clean's params: finished with a whole number of ms and its states, or waiting", () => {
    expect(queueParamsOf('queue.clean', { mode: 'finished', olderThanMs: 3_600_000, states: ['completed', 'failed'] })).toEqual({
      params: { mode: 'finished', olderThanMs: 3_600_000, states: ['completed', 'failed'] },
    });
    expect(queueParamsOf('queue.clean', { mode: 'waiting', states: ['anything'] })).toEqual({ params: { mode: 'waiting' } });
    for (const params of [
      null,
      { mode: 'all' },
      { mode: 'finished', olderThanMs: -1, states: ['completed'] },
      { mode: 'finished', olderThanMs: 1.5, states: ['completed'] },
      { mode: 'finished', olderThanMs: 0, states: [] },
      { mode: 'finished', olderThanMs: 0, states: ['active'] },
      { mode: 'finished', olderThanMs: 0, states: ['failed', 'failed'] },
    ]) {
      expect(queueParamsOf('queue.clean', params)).toHaveProperty('refused');
    }
  });

  test('concurrency: a whole number from 1, or null to clear it', () => {
    expect(queueParamsOf('queue.concurrency', { concurrency: 4 })).toEqual({ params: { concurrency: 4 } });
    expect(queueParamsOf('queue.concurrency', { concurrency: null })).toEqual({ params: { concurrency: null } });
    for (const concurrency of [0, -2, 1.5, '4', undefined]) expect(queueParamsOf('queue.concurrency', { concurrency })).toHaveProperty('refused');
  });
});

describe('what the agent answers without touching Redis', () => {
  test('a type it does not know is unsupported, naming it; worker controls and rate limits unsupported with their reasons', async () => {
    const runner = offlineRunner();
    expect(await runner.execute({ id: 'c1', type: 'queue.teleport', queue: 'mail' })).toEqual({ id: 'c1', status: 'unsupported', reason: "this agent version does not know 'queue.teleport'" });
    expect(await runner.execute({ id: 'c2', type: 'worker.stop', workerId: 'w1@10.0.0.1:1', hostname: '10.0.0.1', pid: null })).toEqual({
      id: 'c2',
      status: 'unsupported',
      reason: expect.stringContaining('BullMQ has no remote control of its workers'),
    });
    expect(await runner.execute({ id: 'c3', type: 'task.rate_limit', name: 'send', queue: null, params: { rate: '1/s' } })).toMatchObject({ status: 'unsupported' });
  });

  test('a queue command outside its watched queues, or with params it cannot read, is refused before any Redis call', async () => {
    const runner = offlineRunner();
    expect(await runner.execute({ id: 'c1', type: 'queue.pause', queue: 'secretq' })).toEqual({
      id: 'c1',
      status: 'failed',
      reason: 'queue "secretq" is not watched by this agent (it watches mail under prefix bull): it acts only on the queues it watches',
    });
    expect(await runner.execute({ id: 'c2', type: 'queue.pause', queue: 'bull:mail' })).toMatchObject({ status: 'failed', reason: expect.stringContaining('not a BullMQ queue name') });
    expect(await runner.execute({ id: 'c3', type: 'queue.clean', queue: 'mail', params: { mode: 'finished' } })).toMatchObject({
      status: 'failed',
      reason: expect.stringContaining("the command's params are not valid"),
    });
    // a watched queue with good params needs Redis: while it is unreachable the command waits (null), it is not answered
    expect(await runner.execute({ id: 'c4', type: 'queue.pause', queue: 'mail' })).toBeNull();
  });

  test('its capabilities name every command type jobwatch knows, each supported or with a reason', () => {
    const controls = bullmqControls();
    expect(Object.keys(controls).sort()).toEqual([...COMMAND_TYPES].sort());
    for (const support of Object.values(controls)) expect(support.supported || (typeof support.reason === 'string' && support.reason.length > 0)).toBe(true);
    expect(bullmqControls(false)['queue.concurrency']).toEqual({ supported: false, reason: expect.stringContaining('has no global concurrency') });
  });
});
