/**
 * NATS refusals told apart by their JetStream error code (cluster/nats-errors.ts), never by
 * message text: the real refusals of a 3-server NATS cluster (a stale fence on a publish, a create of
 * an existing key, an update on a moved revision) are classified, wrapped or not, with the
 * sequence the server names; an error that only reads like one is not; and a fenced writer's
 * error carries the sequence to fence on.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { JetStreamApiError, jetstream, jetstreamManager, StorageType, type JetStreamClient } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { FencedError, FencedPublisher } from '../../cluster/fenced-publisher.ts';
import { isWrongLastSequence, lastSequenceNamedBy } from '../../cluster/nats-errors.ts';
import { DurabilityError } from '../../persistence/errors.ts';
import { encodeValue } from '../../persistence/record-codec.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';

describe('classified by code', () => {
  const wrongLast = new JetStreamApiError({ err_code: 10071, code: 400, description: 'wrong last sequence: 42' });

  test('wrong last sequence (10071, and 10164 for an unknown one), also as the cause of another error', () => {
    expect(isWrongLastSequence(wrongLast)).toBe(true);
    expect(isWrongLastSequence(new JetStreamApiError({ err_code: 10164, code: 400, description: 'wrong last sequence unknown' }))).toBe(true);
    expect(isWrongLastSequence(new DurabilityError('publishing failed', { cause: wrongLast }))).toBe(true);
    expect(lastSequenceNamedBy(wrongLast)).toBe(42);
    expect(lastSequenceNamedBy(new DurabilityError('wrapped', { cause: wrongLast }))).toBe(42);
  });

  test('another code, or text that only reads like the refusal, is not it', () => {
    const notFound = new JetStreamApiError({ err_code: 10059, code: 404, description: 'stream not found' });
    expect(isWrongLastSequence(notFound)).toBe(false);
    expect(lastSequenceNamedBy(notFound)).toBeNull();
    expect(isWrongLastSequence(new Error('wrong last sequence: 7'))).toBe(false);
    expect(isWrongLastSequence(new Error('key exists'))).toBe(false);
    expect(isWrongLastSequence('wrong last sequence: 7')).toBe(false);
    expect(isWrongLastSequence(null)).toBe(false);
    expect(lastSequenceNamedBy(new JetStreamApiError({ err_code: 10071, code: 400, description: 'wrong last sequence' }))).toBeNull();
  });
});

describe('the refusals of a real NATS cluster', () => {
  let nats: NatsTestCluster;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let kv: KV;

  beforeAll(async () => {
    nats = await startNatsCluster();
    nc = await connect({ servers: nats.url.split(',') });
    js = jetstream(nc);
    await (await jetstreamManager(nc)).streams.add({ name: 'ERRORS_TEST', subjects: ['errors.>'], num_replicas: 3, storage: StorageType.File });
    kv = await new Kvm(js).create('errors_test', { replicas: 3, history: 1, allow_direct: false });
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });

  async function refusal(attempt: () => Promise<unknown>): Promise<unknown> {
    try {
      await attempt();
    } catch (error) {
      return error;
    }
    throw new Error('expected a refusal');
  }

  test('a publish fenced on a stale sequence: classified, naming the subject\'s last sequence', async () => {
    const first = await js.publish('errors.fence', 'a');
    const second = await js.publish('errors.fence', 'b', { expect: { lastSubjectSequence: first.seq } });
    const error = await refusal(() => js.publish('errors.fence', 'c', { expect: { lastSubjectSequence: first.seq } }));
    expect(isWrongLastSequence(error)).toBe(true);
    expect(lastSequenceNamedBy(error)).toBe(second.seq);
  });

  test('a create of an existing key and an update on a moved revision: classified', async () => {
    const revision = await kv.create('taken', 'first');
    expect(isWrongLastSequence(await refusal(() => kv.create('taken', 'second')))).toBe(true);
    await kv.update('taken', 'moved', revision);
    expect(isWrongLastSequence(await refusal(() => kv.update('taken', 'stale', revision)))).toBe(true);
  });

  test('a fenced writer fails with a FencedError naming the sequence to fence on', async () => {
    const options = { js, subject: 'errors.writer', epoch: 1, maxPayloadBytes: 1024 * 1024, log: () => undefined };
    const first = new FencedPublisher({ ...options, node: 'a', lastSeq: 0 });
    await first.append(encodeValue({ by: 'a' }));
    const second = new FencedPublisher({ ...options, node: 'b', lastSeq: first.lastSeq });
    const markerSeq = await second.publishOwnerMarker(first.lastSeq);
    const error = await refusal(() => first.append(encodeValue({ late: true })));
    expect(error).toBeInstanceOf(FencedError);
    expect((error as FencedError).lastSeqNamed).toBe(markerSeq);
  });

  test('a request nobody answers is not a refusal', async () => {
    expect(isWrongLastSequence(await refusal(() => nc.request('no.such.service', '', { timeout: 200 })))).toBe(false);
  });
});
