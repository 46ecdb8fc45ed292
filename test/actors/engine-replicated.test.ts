/**
 * Cluster mode's replica path in the engine: a record another node committed is applied
 * with applyReplicated, which evolves the state and tells the listeners exactly what a
 * local commit tells them (so live streams and views work on a replica), and a replica's
 * log refuses every commit before anything is evolved, without halting the engine.
 */
import { describe, expect, test } from 'bun:test';
import { sha256Hex } from '../../actors/accounts/secrets.ts';
import { ManualClock } from '../../actors/clock.ts';
import { DomainError } from '../../actors/domain-error.ts';
import { Engine, type EngineRecord, type RecordLog } from '../../actors/engine.ts';
import { ingestEvents } from '../../actors/services/ingest-service.ts';
import { jobEvent } from '../support/events.ts';
import { T0 } from '../support/test-app.ts';

const LIMITS = { dailyEventLimit: 0, dedupKeysMax: 100, maxJobsPerConnection: 100, retentionMs: 86_400_000 };
const CREATED: EngineRecord = { t: 'connection.created', connection: { id: 'c1', name: 'prod', ownerId: 'u1', keyHash: sha256Hex('sk_good'), keyPrefix: 'sk_good', createdAtMs: T0 } };

/** An engine and what its listeners heard, as job external ids per change and deleted connections. */
function listenedEngine(log: RecordLog) {
  const heard: string[] = [];
  const engine = new Engine({ clock: new ManualClock(T0), log, limits: LIMITS });
  engine.listen({
    changed: (connectionId, changes) => heard.push(`${connectionId}: ${[...changes.jobs].map((ref) => engine.connection(connectionId)!.jobs.readRefListed(ref)!.externalId).join(',')}`),
    deleted: (connectionId) => heard.push(`deleted ${connectionId}`),
  });
  return { engine, heard };
}

/** Never writes: what the store does for a partition another node writes (cluster/partition-log.ts). */
const replicaLog: RecordLog = {
  append: () => {
    throw new DomainError('SERVICE_UNAVAILABLE', 'this node does not own the log');
  },
};

describe('applyReplicated', () => {
  test("a replica applying the owner's records holds the owner's state and its listeners hear what the owner's heard", async () => {
    const committed: EngineRecord[] = [];
    const owner = listenedEngine({ append: async (record) => committed.push(record as EngineRecord) });
    await owner.engine.commit(CREATED);
    await ingestEvents(owner.engine, 'sk_good', [jobEvent('c1', T0 - 2_000, { externalId: 'job-a' }), jobEvent('c1', T0 - 1_000, { externalId: 'job-b' })]);
    await ingestEvents(owner.engine, 'sk_good', [jobEvent('c1', T0 - 500, { externalId: 'job-c' })]);

    expect(owner.heard).toEqual(['c1: job-a,job-b', 'c1: job-c']);
    const replica = listenedEngine(replicaLog);
    for (const record of committed) replica.engine.applyReplicated(record);
    expect(replica.heard.length).toBeGreaterThan(0);
    expect(replica.heard).toEqual(owner.heard);
    expect([...replica.engine.connection('c1')!.jobs.values()].map((job) => [job.externalId, job.state])).toEqual(
      [...owner.engine.connection('c1')!.jobs.values()].map((job) => [job.externalId, job.state]),
    );

    owner.engine.applyReplicated({ t: 'connection.deleted', connectionId: 'c1' });
    expect(owner.heard.at(-1)).toBe('deleted c1');
    expect(committed).toHaveLength(3); // applying appends nothing
  });

  test("a replica's log refuses a commit before the record is evolved, with 503, and the engine goes on (not halted)", async () => {
    const replica = listenedEngine(replicaLog);
    replica.engine.applyReplicated(CREATED);
    const refused = await ingestEvents(replica.engine, 'sk_good', [jobEvent('c1', T0, { externalId: 'job-x' })]).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe('SERVICE_UNAVAILABLE');
    expect(replica.engine.connection('c1')!.jobs.size).toBe(0);
    expect(replica.engine.halted).toBe(false);
    expect(replica.heard).toEqual([]);
  });
});

describe("the engine's activity (what the idle collection watches, src/service/memory-return.ts)", () => {
  test('a commit counts as taken when it starts and waits until its log answers, also when the log fails; a replicated record counts too', async () => {
    let answer: { resolve: (seq: number) => void; reject: (error: unknown) => void } | null = null;
    const { engine } = listenedEngine({ append: () => new Promise<number>((resolve, reject) => (answer = { resolve, reject })) });
    const first = engine.commit(CREATED);
    expect({ taken: engine.recordsTaken, waiting: engine.commitsWaiting }).toEqual({ taken: 1, waiting: 1 });
    answer!.resolve(1);
    await first;
    expect({ taken: engine.recordsTaken, waiting: engine.commitsWaiting }).toEqual({ taken: 1, waiting: 0 });

    const failing = engine.commit({ ...CREATED, connection: { ...CREATED.connection, id: 'c2', keyHash: sha256Hex('sk_two'), keyPrefix: 'sk_two' } } as EngineRecord);
    expect(engine.commitsWaiting).toBe(1);
    answer!.reject(new Error('disk full'));
    await expect(failing).rejects.toThrow();
    expect({ taken: engine.recordsTaken, waiting: engine.commitsWaiting }).toEqual({ taken: 2, waiting: 0 });

    const replica = listenedEngine(replicaLog).engine;
    replica.applyReplicated(CREATED);
    expect({ taken: replica.recordsTaken, waiting: replica.commitsWaiting }).toEqual({ taken: 1, waiting: 0 });
  });
});
