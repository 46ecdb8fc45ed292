/**
 * The follower's own decisions, with a stand-in for JetStream's consumers (no NATS): a
 * consumer that stops delivering while the log grows is replaced from the last applied
 * sequence; a message whose predecessor was never applied (a purge) stops the follower
 * and reports it; a message admitted on an already passed fence is applied in order.
 */
import { expect, test } from 'bun:test';
import { PubHeaders, type JetStreamClient } from '@nats-io/jetstream';
import { PartitionReader, type PartitionReaderOptions } from '../../cluster/partition-reader.ts';
import { STALL_CHECK_MS, SubjectFollower } from '../../cluster/subject-follower.ts';
import { encodeValue } from '../../persistence/record-codec.ts';

const SUBJECT = 'jobwatch.log.p.0';

interface Delivery {
  seq: number;
  previousSeq: number;
  n: number;
}

/** Consumers that deliver the given batches (one per consumer made), then deliver nothing until closed. */
function standInJetStream(batches: Delivery[][]) {
  const startedAt: number[] = [];
  const js = {
    consumers: {
      get: async (_stream: string, options: { opt_start_seq: number }) => {
        startedAt.push(options.opt_start_seq);
        const batch = batches.shift() ?? [];
        return {
          consume: async () => {
            let close: () => void = () => undefined;
            const closed = new Promise<void>((resolve) => {
              close = resolve;
            });
            return {
              close: async () => close(),
              async *[Symbol.asyncIterator]() {
                for (const [index, delivery] of batch.entries()) {
                  yield {
                    subject: SUBJECT,
                    seq: delivery.seq,
                    data: encodeValue([encodeValue({ n: delivery.n })]),
                    headers: { get: (name: string) => (name === PubHeaders.ExpectedLastSubjectSequenceHdr ? String(delivery.previousSeq) : '') },
                    info: { pending: batch.length - index - 1 },
                  };
                }
                await closed; // a consumer that went quiet: nothing more until it is closed
              },
            };
          },
        };
      },
    },
  };
  return { js: js as unknown as JetStreamClient, startedAt };
}

function follow(batches: Delivery[][], lastSeq: () => number) {
  const { js, startedAt } = standInJetStream(batches);
  const applied: unknown[] = [];
  const lines: string[] = [];
  const fatal: Error[] = [];
  // apply() reads only the subject and the log of its options; nothing here reaches NATS
  const reader = new PartitionReader({ subject: SUBJECT, log: (line: string) => lines.push(line) } as unknown as PartitionReaderOptions);
  const follower = new SubjectFollower({
    js,
    stream: 'JOBWATCH_LOG',
    filter: SUBJECT,
    readerFor: (subject) => (subject === SUBJECT ? reader : undefined),
    fromSeq: 0,
    readLastSeq: async () => lastSeq(),
    apply: (record) => applied.push(record),
    log: (line) => lines.push(line),
    onFatal: (error) => fatal.push(error),
  });
  return { follower, applied, lines, fatal, startedAt };
}

test('a consumer that goes quiet while the log grows is replaced, starting after the last sequence applied', async () => {
  const run = follow(
    [
      [{ seq: 1, previousSeq: 0, n: 1 }],
      [
        { seq: 2, previousSeq: 1, n: 2 },
        { seq: 3, previousSeq: 2, n: 3 },
      ],
    ],
    () => 3,
  );
  expect(await run.follower.waitApplied(3, STALL_CHECK_MS * 4)).toBe(true);
  expect(run.applied).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
  expect(run.startedAt).toEqual([1, 2]);
  expect(run.lines.some((line) => /stalled at seq 1 while the log is at seq 3: subscribing again/.test(line))).toBe(true);
  expect(run.fatal).toEqual([]);
  await run.follower.stop();
}, 20_000);

test('a message whose predecessor was never applied (purged) stops the follower and is reported; nothing after it is applied', async () => {
  const run = follow(
    [
      [
        { seq: 1, previousSeq: 0, n: 1 },
        { seq: 5, previousSeq: 4, n: 5 },
        { seq: 6, previousSeq: 5, n: 6 },
      ],
    ],
    () => 6,
  );
  expect(await run.follower.waitApplied(6, 1_000)).toBe(false);
  expect(run.applied).toEqual([{ n: 1 }]);
  expect(run.follower.following).toBe(false);
  expect(run.follower.appliedSeq).toBe(1);
  expect(run.fatal.map((error) => error.message)).toEqual([
    expect.stringMatching(/^the replica of jobwatch\.log\.p\.0 stopped: jobwatch\.log\.p\.0 seq 5 follows seq 4 but this node applied up to seq 1: .*purged/),
  ]);
  await run.follower.stop();
});

test('a message JetStream admitted on a fence another had passed is applied in stream order, and said', async () => {
  const run = follow(
    [
      [
        { seq: 1, previousSeq: 0, n: 1 },
        { seq: 2, previousSeq: 1, n: 2 },
        { seq: 3, previousSeq: 1, n: 3 },
        { seq: 4, previousSeq: 3, n: 4 },
      ],
    ],
    () => 4,
  );
  expect(await run.follower.waitApplied(4, 1_000)).toBe(true);
  expect(run.applied).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
  expect(run.fatal).toEqual([]);
  expect(run.lines.filter((line) => /seq 3 was admitted fenced on seq 1 although seq 2 was stored/.test(line))).toHaveLength(1);
  await run.follower.stop();
});
