/**
 * The event reader against a scripted Redis: entries go to the deliverer with their stream
 * position, and a batch whose job hashes could not be read is read again, never skipped.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventReader } from '../src/event-reader.js';
import { sleep } from './support/wait.js';
import { JobFacts } from '../src/job-facts.js';
import { Normalizer } from '../src/normalize.js';

const T0 = 1_800_000_000_000;
const entry = (n, event, jobId) => [`${T0 + n}-0`, ['event', event, 'jobId', jobId, 'name', 'x']];

/** A stream of one queue `q`; XREAD answers from the position asked. `trimmed` entries were added before the first one left. */
function scriptedRedis(stream, failFactReads = 0, trimmed = 0) {
  const reads = [];
  let failures = failFactReads;
  const blocking = {
    async xread(...args) {
      const from = args[args.length - 1];
      reads.push(from);
      const after = stream.filter(([id]) => Number(id.split('-')[0]) > Number(from.split('-')[0]));
      if (after.length === 0) {
        await sleep(5);
        return null;
      }
      return [['bull:q:events', after.slice(0, 2)]];
    }
  };
  const redis = {
    async jobwatchReadJobs(count) {
      if (failures > 0) {
        failures -= 1;
        throw new Error('Connection is closed.');
      }
      return Array.from({ length: count }, () => []);
    },
    /** @param {number} count @param {...string} keysAndArgs */
    async jobwatchReadPayloads(count, ...keysAndArgs) {
      // as the script answers: job 1 has data and one log line, the others nothing
      // (each job: data bytes, data, returnvalue bytes, returnvalue, log length, lines skipped, last line's sha, new lines...)
      const asked = keysAndArgs.slice(count + 5);
      return Array.from({ length: count / 2 }, (_, index) => {
        const [what, logCount] = [asked[index * 3], Number(asked[index * 3 + 1])];
        if (keysAndArgs[index * 2] !== 'bull:q:1') return [0, null, 0, null, what.includes('l') ? 0 : -1, 0, ''];
        const data = what.includes('d') ? [24, '{"to":"ada","password":"p"}'] : [0, null];
        const logs = !what.includes('l') ? [-1, 0, ''] : logCount < 1 ? [1, 0, 'a1', 'sent to ada'] : [1, 0, 'a1'];
        return [...data, 0, null, ...logs];
      });
    },
    async xinfo() {
      return ['length', stream.length, 'entries-added', stream.length + trimmed, 'first-entry', stream[0]];
    },
    async xrevrange() {
      return [stream[stream.length - 1]];
    }
  };
  return { redis, blocking, reads };
}

function reader(parts, start) {
  const submitted = [];
  const deliverer = { memoryFull: false, submit: (events, mark) => submitted.push({ events, mark }) };
  const checkpoints = { get: () => start };
  const r = new EventReader({ ...parts, prefix: 'bull', reconcileMax: 0, checkpoints: checkpoints, normalizer: new Normalizer('c', new JobFacts()), deliverer: deliverer });
  return { r, submitted };
}

describe('event reader', () => {
  test('entries become events with the position they reach; a failed read of job hashes reads the batch again', async () => {
    const stream = [entry(1, 'added', '1'), entry(2, 'active', '1'), entry(3, 'completed', '1'), entry(4, 'added', '2')];
    const parts = scriptedRedis(stream, 1);
    const { r, submitted } = reader(parts, `${T0}-0`);
    r.watch(['q']);
    const stopping = { stopped: false };
    await assert.rejects(r.readOnce(stopping), { message: 'Connection is closed.' });
    assert.deepEqual(submitted, []);
    for (let round = 0; round < 6 && submitted.reduce((n, s) => n + s.events.length, 0) < 4; round++) await r.readOnce(stopping);
    stopping.stopped = true;
    const states = submitted.flatMap((s) => s.events.map((event) => `${event.job.externalId}:${event.job.state}`));
    assert.deepEqual(states, ['q:1:queued', 'q:1:active', 'q:1:completed', 'q:2:queued']);
    assert.deepEqual(submitted.map((s) => s.mark.id), [`${T0 + 2}-0`, `${T0 + 4}-0`]);
    // job 1's data (masked) and log line go with its first event, once
    const jobOne = submitted.flatMap((s) => s.events).filter((event) => event.job.externalId === 'q:1');
    assert.deepEqual(jobOne.map((event) => [event.job.args, event.job.logs]), [
      [{ to: 'ada', password: '[redacted]' }, ['sent to ada']],
      [undefined, undefined],
      [undefined, undefined],
    ]);
  });

  /** Reads until `count` events were submitted (or a few rounds passed); their `externalId:state`. */
  async function statesRead(r, submitted, count) {
    const stopping = { stopped: false };
    for (let round = 0; round < 6 && submitted.reduce((n, s) => n + s.events.length, 0) < count; round++) await r.readOnce(stopping);
    stopping.stopped = true;
    return submitted.flatMap((s) => s.events.map((event) => `${event.job.externalId}:${event.job.state}`));
  }

  test('a queue created after the first scan is read from the beginning of its stream: a job added and started before the scan keeps its queued entry', async () => {
    const stream = [entry(1, 'added', '1'), entry(2, 'active', '1'), entry(3, 'added', '2')];
    const parts = scriptedRedis(stream);
    const { r, submitted } = reader(parts, null);
    r.watch([]); // the first scan: no queue yet
    r.watch(['q']); // a later scan finds it, its first job already running
    assert.deepEqual(await statesRead(r, submitted, 3), ['q:1:queued', 'q:1:active', 'q:2:queued']);
    assert.equal(parts.reads[0], '0-0');
  });

  test('a queue of the first scan without a checkpoint is reconciled and followed from its tail, not replayed', async () => {
    const stream = [entry(1, 'added', '1'), entry(2, 'active', '1')];
    const parts = scriptedRedis(stream);
    const { r, submitted } = reader(parts, null);
    r.watch(['q']);
    assert.deepEqual(await statesRead(r, submitted, 1), []);
    assert.equal(parts.reads[0], `${T0 + 2}-0`);
  });

  test('a queue created after the first scan whose stream was already trimmed is reconciled and followed from its tail', async () => {
    const stream = [entry(5, 'added', '3'), entry(6, 'active', '3')];
    const parts = scriptedRedis(stream, 0, 7);
    const { r, submitted } = reader(parts, null);
    r.watch([]);
    r.watch(['q']);
    assert.deepEqual(await statesRead(r, submitted, 1), []);
    assert.equal(parts.reads[0], `${T0 + 6}-0`);
    assert.deepEqual(submitted[0]?.mark, { queue: 'q', id: `${T0 + 6}-0` }); // the reconciliation's place
  });
});
