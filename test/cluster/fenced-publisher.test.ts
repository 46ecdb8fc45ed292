/**
 * The log protocol of cluster mode against a real 3-server NATS cluster: group commit
 * (concurrent appends share messages), the seal a snapshot relies on (it covers exactly
 * the records appended before it), splitting a group larger than a message, and fencing
 * (a second writer's marker makes the first one's next append fail, with everything
 * pending).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { jetstream, jetstreamManager, StorageType, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { FencedPublisher, type LogMessage } from '../../cluster/fenced-publisher.ts';
import { lastSubjectMessage, lastSubjectSeq, replaySubject } from '../../cluster/subject-replay.ts';
import { DurabilityError } from '../../persistence/errors.ts';
import { decodeValue, encodeValue } from '../../persistence/record-codec.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';

const STREAM = 'PUBLISHER_TEST';
let nats: NatsTestCluster;
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;
let subjects = 0;

beforeAll(async () => {
  nats = await startNatsCluster();
  nc = await connect({ servers: nats.url.split(',') });
  js = jetstream(nc);
  jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: STREAM, subjects: ['test.>'], num_replicas: 3, storage: StorageType.File });
});
afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

/** Message ids are `<node>:<epoch>:<n>` and the duplicate window spans the stream: each test writes as its own nodes. */
function publisher(subject: string, node: string, lastSeq = 0, maxPayloadBytes = 8 * 1024 * 1024): FencedPublisher {
  return new FencedPublisher({ js, subject, node: `${subject}/${node}`, epoch: 1, lastSeq, maxPayloadBytes, log: () => undefined });
}

/** The subject's messages as [seq, records] (records decoded), markers left out. */
async function messagesOf(subject: string, toSeq?: number): Promise<Array<{ seq: number; records: unknown[] }>> {
  const last = toSeq ?? (await lastSubjectSeq(jsm, STREAM, subject));
  const messages: Array<{ seq: number; records: unknown[] }> = [];
  await replaySubject(js, STREAM, subject, 1, last, ({ seq, data }) => {
    const message = decodeValue(data) as LogMessage;
    if (Array.isArray(message)) messages.push({ seq, records: message.map((encoded) => decodeValue(encoded)) });
  });
  return messages;
}

test('concurrent appends share messages, and every record is stored once, in append order', async () => {
  const subject = `test.group.${subjects++}`;
  const writer = publisher(subject, 'a');
  const seqs = await Promise.all(Array.from({ length: 200 }, (_, index) => writer.append(encodeValue({ index }))));
  const messages = await messagesOf(subject);
  expect(messages.length).toBeGreaterThan(1);
  expect(messages.length).toBeLessThan(20); // one in flight, the rest queued together
  expect(messages.flatMap((message) => message.records)).toEqual(Array.from({ length: 200 }, (_, index) => ({ index })));
  expect(seqs.at(-1)).toBe(writer.lastSeq);
});

test('sealed() resolves with the seq that covers exactly the records appended before it', async () => {
  const subject = `test.seal.${subjects++}`;
  const writer = publisher(subject, 'a');
  const before = Array.from({ length: 50 }, (_, index) => writer.append(encodeValue({ before: index })));
  const covered = writer.sealed();
  const after = Array.from({ length: 50 }, (_, index) => writer.append(encodeValue({ after: index })));
  await Promise.all([...before, ...after]);
  const coveredRecords = (await messagesOf(subject, await covered)).flatMap((message) => message.records);
  expect(coveredRecords).toEqual(Array.from({ length: 50 }, (_, index) => ({ before: index })));
});

test('a group larger than one message goes out as several, each within the limit', async () => {
  const subject = `test.split.${subjects++}`;
  const writer = publisher(subject, 'a', 0, 64 * 1024);
  const record = (index: number) => encodeValue({ index, padding: 'x'.repeat(20_000) });
  const appended = Array.from({ length: 12 }, (_, index) => writer.append(record(index)));
  await Promise.all(appended);
  const messages = await messagesOf(subject);
  expect(messages.flatMap((message) => message.records).map((each) => (each as { index: number }).index)).toEqual(
    Array.from({ length: 12 }, (_, index) => index),
  );
  for (const message of messages) expect(message.records.length).toBeLessThanOrEqual(3);
  await expect(writer.append(encodeValue({ padding: 'x'.repeat(70_000) }))).rejects.toThrow(/larger than one NATS message/);
});

test('a second writer fenced on the subject end deposes the first: its next append and everything pending fail', async () => {
  const subject = `test.fence.${subjects++}`;
  const first = publisher(subject, 'a');
  await first.append(encodeValue({ by: 'a' }));
  const second = publisher(subject, 'b', first.lastSeq);
  await second.publishOwnerMarker(first.lastSeq);
  const pending = Array.from({ length: 5 }, (_, index) => first.append(encodeValue({ late: index })));
  for (const append of pending) await expect(append).rejects.toBeInstanceOf(DurabilityError);
  await expect(pending[0]!).rejects.toThrow(/^fenced: test\.fence\.\d+ has moved past seq \d+ \(wrong last sequence/);
  await expect(first.append(encodeValue({ later: true }))).rejects.toThrow(/^fenced/);
  expect((await messagesOf(subject)).flatMap((message) => message.records)).toEqual([{ by: 'a' }]);
  expect(await second.append(encodeValue({ by: 'b' }))).toBeGreaterThan(0);
});

/**
 * A client whose first publish is stored but answered by a timeout (an ack lost on a loaded
 * machine or in an election), and whose retries then meet what a clustered stream may answer:
 * the fence the first attempt moved (a real refusal, of a probe under another id on the same
 * fence). `between` runs after the lost ack, before the retry.
 */
function ackLostOnce(between: () => Promise<void> = async () => undefined): JetStreamClient {
  let calls = 0;
  return Object.assign(Object.create(js) as JetStreamClient, {
    publish: async (subject: string, payload: Uint8Array, options: { msgID: string; expect: { lastSubjectSequence: number } }) => {
      calls += 1;
      if (calls === 1) {
        await js.publish(subject, payload, options);
        await between();
        throw new Error('TimeoutError: timeout');
      }
      if (calls === 2) return js.publish(subject, payload, { ...options, msgID: `${options.msgID}:probe` });
      return js.publish(subject, payload, options);
    },
  });
}

function publisherOn(client: JetStreamClient, subject: string, lines: string[]): FencedPublisher {
  return new FencedPublisher({
    js: client, subject, node: `${subject}/a`, epoch: 1, lastSeq: 0, maxPayloadBytes: 8 * 1024 * 1024,
    log: (line) => lines.push(line), lastMessage: () => lastSubjectMessage(jsm, STREAM, subject),
  });
}

test('a publish stored but unanswered, whose retry the fence refuses, is the first attempt\'s success: stored once, the writer goes on', async () => {
  const subject = `test.lost-ack.${subjects++}`;
  const lines: string[] = [];
  const writer = publisherOn(ackLostOnce(), subject, lines);
  const seq = await writer.append(encodeValue({ n: 1 }));
  expect(seq).toBe(await lastSubjectSeq(jsm, STREAM, subject));
  expect(await writer.append(encodeValue({ n: 2 }))).toBeGreaterThan(seq);
  expect((await messagesOf(subject)).flatMap((message) => message.records)).toEqual([{ n: 1 }, { n: 2 }]);
  expect(lines).toEqual([
    `publishing to ${subject} failed (TimeoutError: timeout); retrying with the same message id`,
    `published to ${subject} at seq ${seq} after 2 attempts (the first had been stored; the retry was refused by the fence it had moved)`,
  ]);
});

test('a retry the fence refuses because another owner wrote after the lost ack is fenced, not taken for its own', async () => {
  const subject = `test.lost-ack-fenced.${subjects++}`;
  const lines: string[] = [];
  const writer = publisherOn(
    ackLostOnce(async () => void (await publisher(subject, 'b', await lastSubjectSeq(jsm, STREAM, subject)).publishOwnerMarker(await lastSubjectSeq(jsm, STREAM, subject)))),
    subject,
    lines,
  );
  await expect(writer.append(encodeValue({ n: 1 }))).rejects.toThrow(/^fenced: /);
  expect(lines.at(-1)).toMatch(/^fenced: test\.lost-ack-fenced\.\d+ has moved past seq 0 \(wrong last sequence/);
});

test('a message id used before is an error, not a silent success: the duplicate window would drop the record', async () => {
  const subject = `test.reused.${subjects++}`;
  await publisher(subject, 'a').append(encodeValue({ first: true }));
  const sameIdentity = publisher(subject, 'a', await lastSubjectSeq(jsm, STREAM, subject));
  await expect(sameIdentity.append(encodeValue({ second: true }))).rejects.toThrow(/message id .* was already used/);
});

test('each group published is told to the observer (metrics, ingest timings): every record and byte once, with the time to the quorum\'s ack', async () => {
  const subject = `test.observed.${subjects++}`;
  const groups: Array<{ records: number; bytes: number; ms: number }> = [];
  const writer = new FencedPublisher({
    js,
    subject,
    node: `${subject}/a`,
    epoch: 1,
    lastSeq: 0,
    maxPayloadBytes: 8 * 1024 * 1024,
    log: () => undefined,
    observer: { batchWritten: (records, bytes, ms) => groups.push({ records, bytes, ms }), synced: () => undefined },
  });
  const payloads = Array.from({ length: 50 }, (_, index) => encodeValue({ index, pad: 'x'.repeat(index) }));
  await Promise.all(payloads.map((payload) => writer.append(payload)));
  expect(groups.length).toBe((await messagesOf(subject)).length);
  expect(groups.reduce((sum, group) => sum + group.records, 0)).toBe(50);
  expect(groups.reduce((sum, group) => sum + group.bytes, 0)).toBe(payloads.reduce((sum, payload) => sum + payload.length, 0));
  expect(groups.every((group) => group.ms > 0)).toBe(true);
});
