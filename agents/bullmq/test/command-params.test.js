/**
 * What the BullMQ agent reads of a command before it touches Redis: a queue's name, a
 * queue command's params, a command type it does not carry out (unsupported, with the
 * reason it reported at its start), and the capabilities it reports.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { bullmqControls } from '../src/capabilities.js';
import { setLogLevel } from '../src/log.js';
import { CommandRunner, queueNameRefusal } from '../src/commands.js';
import { queueParamsOf } from '../src/queue-commands.js';
import { assertFields } from './support/fields.js';

// the outcomes are asserted; their log lines are the e2e tests' concern (and the level is the process's: put back after)
before(() => setLogLevel('ERROR'));
after(() => setLogLevel('INFO'));

/** A runner with no Redis and no jobwatch: what it answers here, it answers without either. */
function offlineRunner() {
  const redis = { status: 'end' };
  const client = { get: () => Promise.reject(new Error('no jobwatch here')) };
  return new CommandRunner(redis, 'bull', client, (queue) => queue === 'mail', 'it watches mail under prefix bull');
}

describe('queue names and params', () => {
  test('a queue name is 1 to 255 characters without control characters or colons', () => {
    assert.equal(queueNameRefusal('mail'), null);
    for (const name of ['', 'a:b', 'ma\nil', 'q'.repeat(256), 7, null]) assert.ok(queueNameRefusal(name).includes('not a BullMQ queue name'));
  });

  test("a clean's params: finished with a whole number of ms and its states, or waiting", () => {
    assert.deepEqual(queueParamsOf('queue.clean', { mode: 'finished', olderThanMs: 3_600_000, states: ['completed', 'failed'] }), {
      params: { mode: 'finished', olderThanMs: 3_600_000, states: ['completed', 'failed'] }
    });
    assert.deepEqual(queueParamsOf('queue.clean', { mode: 'waiting', states: ['anything'] }), { params: { mode: 'waiting' } });
    for (const params of [
    null,
    { mode: 'all' },
    { mode: 'finished', olderThanMs: -1, states: ['completed'] },
    { mode: 'finished', olderThanMs: 1.5, states: ['completed'] },
    { mode: 'finished', olderThanMs: 0, states: [] },
    { mode: 'finished', olderThanMs: 0, states: ['active'] },
    { mode: 'finished', olderThanMs: 0, states: ['failed', 'failed'] }])
    {
      assert.ok('refused' in queueParamsOf('queue.clean', params));
    }
  });

  test('concurrency: a whole number from 1, or null to clear it', () => {
    assert.deepEqual(queueParamsOf('queue.concurrency', { concurrency: 4 }), { params: { concurrency: 4 } });
    assert.deepEqual(queueParamsOf('queue.concurrency', { concurrency: null }), { params: { concurrency: null } });
    for (const concurrency of [0, -2, 1.5, '4', undefined]) assert.ok('refused' in queueParamsOf('queue.concurrency', { concurrency }));
  });
});

describe('what the agent answers without touching Redis', () => {
  test('a type it does not know is unsupported, naming it; worker controls and rate limits unsupported with their reasons', async () => {
    const runner = offlineRunner();
    assert.deepEqual(await runner.execute({ id: 'c1', type: 'queue.teleport', queue: 'mail' }), { id: 'c1', status: 'unsupported', reason: "this agent version does not know 'queue.teleport'" });
    assertFields(await runner.execute({ id: 'c2', type: 'worker.stop', workerId: 'w1@10.0.0.1:1', hostname: '10.0.0.1', pid: null }), {
      id: 'c2',
      status: 'unsupported',
      reason: /BullMQ has no remote control of its workers/
    });
    assertFields(await runner.execute({ id: 'c3', type: 'task.rate_limit', name: 'send', queue: null, params: { rate: '1/s' } }), { status: 'unsupported' });
  });

  test('a queue command outside its watched queues, or with params it cannot read, is refused before any Redis call', async () => {
    const runner = offlineRunner();
    assert.deepEqual(await runner.execute({ id: 'c1', type: 'queue.pause', queue: 'secretq' }), {
      id: 'c1',
      status: 'failed',
      reason: 'queue "secretq" is not watched by this agent (it watches mail under prefix bull): it acts only on the queues it watches'
    });
    assertFields(await runner.execute({ id: 'c2', type: 'queue.pause', queue: 'bull:mail' }), { status: 'failed', reason: /not a BullMQ queue name/ });
    assertFields(await runner.execute({ id: 'c3', type: 'queue.clean', queue: 'mail', params: { mode: 'finished' } }), {
      status: 'failed',
      reason: /the command's params are not valid/
    });
    // a watched queue with good params needs Redis: while it is unreachable the command waits (null), it is not answered
    assert.equal(await runner.execute({ id: 'c4', type: 'queue.pause', queue: 'mail' }), null);
  });

  test('its capabilities give each command type it knows as supported or with a reason', () => {
    const controls = bullmqControls();
    for (const support of Object.values(controls)) assert.equal(support.supported || typeof support.reason === 'string' && support.reason.length > 0, true);
    assertFields(bullmqControls(false)['queue.concurrency'], { supported: false, reason: /has no global concurrency/ });
  });
});
