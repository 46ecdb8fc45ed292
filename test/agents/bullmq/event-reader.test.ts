/**
 * The event reader against a scripted Redis: entries go to the deliverer with their stream
 * position, and a batch whose job hashes could not be read is read again, never skipped.
 */
import { describe, expect, test } from 'bun:test';
import { EventReader } from '../../../agents/bullmq/src/event-reader.js';
import { JobFacts } from '../../../agents/bullmq/src/job-facts.js';
import { Normalizer } from '../../../agents/bullmq/src/normalize.js';

const T0 = 1_800_000_000_000;
const entry = (n: number, event: string, jobId: string) => [`${T0 + n}-0`, ['event', event, 'jobId', jobId, 'name', 'x']] as [string, string[]];

/** A stream of one queue `q`; XREAD answers from the position asked. `trimmed` entries were added before the first one left. */
function scriptedRedis(stream: Array<[string, string[]]>, failFactReads = 0, trimmed = 0) {
  const reads: string[] = [];
  let failures = failFactReads;
  const blocking = {
    async xread(...args: any[]) {
      const from = args[args.length - 1] as string;
      reads.push(from);
      const after = stream.filter(([id]) => Number(id.split('-')[0]) > Number(from.split('-')[0]));
      if (after.length === 0) {
        await Bun.sleep(5);
        return null;
      }
      return [['bull:q:events', after.slice(0, 2)]];
    },
  };
  const redis = {
    async jobwatchReadJobs(count: number) {
      if (failures > 0) {
        failures -= 1;
        throw new Error('Connection is closed.');
      }
      return Array.from({ length: count }, () => []);
    },
    async jobwatchReadPayloads(count: number, ...keysAndArgs: string[]) {
      // as the script answers: job 1 has data and one log line, the others nothing
      // (each job: data bytes, data, returnvalue bytes, returnvalue, log length, lines skipped, last line's sha, new lines...)
      const asked = keysAndArgs.slice(count + 5);
      return Array.from({ length: count / 2 }, (_, index) => {
        const [what, logCount] = [asked[index * 3]!, Number(asked[index * 3 + 1])];
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
    },
  };
  return { redis, blocking, reads };
}

function reader(parts: { redis: any; blocking: any }, start: string | null) {
  const submitted: Array<{ events: any[]; mark: any }> = [];
  const deliverer = { memoryFull: false, submit: (events: any[], mark: any) => submitted.push({ events, mark }) };
  const checkpoints = { get: () => start };
  const r = new EventReader({ ...parts, prefix: 'bull', reconcileMax: 0, checkpoints: checkpoints as any, normalizer: new Normalizer('c', new JobFacts()), deliverer: deliverer as any });
  return { r, submitted };
}

describe('event reader', () => {
  test('entries become events with the position they reach; a failed read of job hashes reads the batch again', async () => {
    const stream = [entry(1, 'added', '1'), entry(2, 'active', '1'), entry(3, 'completed', '1'), entry(4, 'added', '2')];
    const parts = scriptedRedis(stream, 1);
    const { r, submitted } = reader(parts, `${T0}-0`);
    r.watch(['q']);
    const stopping = { stopped: false };
    await expect(r.readOnce(stopping)).rejects.toThrow('Connection is closed.');
    expect(submitted).toEqual([]);
    for (let round = 0; round < 6 && submitted.reduce((n, s) => n + s.events.length, 0) < 4; round++) await r.readOnce(stopping);
    stopping.stopped = true;
    const states = submitted.flatMap((s) => s.events.map((event: any) => `${event.job.externalId}:${event.job.state}`));
    expect(states).toEqual(['q:1:queued', 'q:1:active', 'q:1:completed', 'q:2:queued']);
    expect(submitted.map((s) => s.mark.id)).toEqual([`${T0 + 2}-0`, `${T0 + 4}-0`]);
    // job 1's data (masked) and log line go with its first event, once
    const jobOne = submitted.flatMap((s) => s.events).filter((event: any) => event.job.externalId === 'q:1');
    expect(jobOne.map((event: any) => [event.job.args, event.job.logs])).toEqual([
      [{ to: 'ada', password: '[redacted]' }, ['sent to ada']],
      [undefined, undefined],
      [undefined, undefined],
    ]);
  });

  /** Reads until `count` events were submitted (or a few rounds passed); their `externalId:state`. */
  async function statesRead(r: EventReader, submitted: Array<{ events: any[] }>, count: number) {
    const stopping = { stopped: false };
    for (let round = 0; round < 6 && submitted.reduce((n, s) => n + s.events.length, 0) < count; round++) await r.readOnce(stopping);
    stopping.stopped = true;
    return submitted.flatMap((s) => s.events.map((event: any) => `${event.job.externalId}:${event.job.state}`));
  }

  test('a queue created after the first scan is read from the beginning of its stream: a job added and started before the scan keeps its queued entry', async () => {
    const stream = [entry(1, 'added', '1'), entry(2, 'active', '1'), entry(3, 'added', '2')];
    const parts = scriptedRedis(stream);
    const { r, submitted } = reader(parts, null);
    r.watch([]); // the first scan: no queue yet
    r.watch(['q']); // a later scan finds it, its first job already running
    expect(await statesRead(r, submitted, 3)).toEqual(['q:1:queued', 'q:1:active', 'q:2:queued']);
    expect(parts.reads[0]).toBe('0-0');
  });

  test('a queue of the first scan without a checkpoint is reconciled and followed from its tail, not replayed', async () => {
    const stream = [entry(1, 'added', '1'), entry(2, 'active', '1')];
    const parts = scriptedRedis(stream);
    const { r, submitted } = reader(parts, null);
    r.watch(['q']);
    expect(await statesRead(r, submitted, 1)).toEqual([]);
    expect(parts.reads[0]).toBe(`${T0 + 2}-0`);
  });

  test('a queue created after the first scan whose stream was already trimmed is reconciled and followed from its tail', async () => {
    const stream = [entry(5, 'added', '3'), entry(6, 'active', '3')];
    const parts = scriptedRedis(stream, 0, 7);
    const { r, submitted } = reader(parts, null);
    r.watch([]);
    r.watch(['q']);
    expect(await statesRead(r, submitted, 1)).toEqual([]);
    expect(parts.reads[0]).toBe(`${T0 + 6}-0`);
    expect(submitted[0]?.mark).toEqual({ queue: 'q', id: `${T0 + 6}-0` }); // the reconciliation's place
  });
});
