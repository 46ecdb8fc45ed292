import { afterEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../actors/clock.ts';
import { Engine, type EngineRecord } from '../../actors/engine.ts';
import { AccountService } from '../../actors/services/account-service.ts';
import { ConnectionService } from '../../actors/services/connection-service.ts';
import { JobActionService } from '../../actors/services/job-action-service.ts';
import { ingestEvents } from '../../actors/services/ingest-service.ts';
import { openDurableStore, type DurableStore } from '../../persistence/durable-store.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { dumpEngine } from '../support/engine-dump.ts';
import { iso, jobEvent, queueEvent, workerEvent } from '../support/events.ts';
import { T0 } from '../support/test-app.ts';

const LIMITS = { dailyEventLimit: 50_000, dedupKeysMax: 500, maxJobsPerConnection: 400, retentionMs: 86_400_000 };
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function openAt(dir: string, clock: ManualClock) {
  const store = await openDurableStore({ dir, storage: new FileStorage(), fsync: 'always', log: () => undefined });
  const engine = new Engine({ clock, log: store, limits: LIMITS });
  const restorer = engine.restorer();
  const report = await store.recover({ snapshotChunk: (chunk) => restorer.restore(chunk), record: (record) => engine.evolve(record as EngineRecord) });
  const accounts = new AccountService(engine, 86_400_000, 'secret-for-tests');
  const connections = new ConnectionService(engine);
  return { store, engine, accounts, connections, actions: new JobActionService(engine, connections), report };
}

/** A varied workload: out-of-order job events, workers, queue snapshots, duplicates, actions. */
async function workload(opened: Awaited<ReturnType<typeof openAt>>, apiKey: string, connectionId: string, round: number) {
  const events: unknown[] = [];
  for (let i = 0; i < 300; i++) {
    const externalId = `job-${(i * 7 + round * 13) % 450}`;
    const atMs = T0 - 3_600_000 + ((i * 7919 + round * 104_729) % 3_600_000);
    const state = ['queued', 'active', 'completed', 'failed', 'retrying'][(i + round) % 5]!;
    events.push(
      jobEvent(connectionId, atMs, {
        externalId,
        name: `tasks.t${i % 7}`,
        queue: i % 4 === 0 ? null : `q${i % 3}`,
        state,
        workerId: `w${i % 5}`,
        attempt: 1 + (i % 3),
        startedAt: state === 'queued' ? null : iso(atMs - 500),
        completedAt: state === 'completed' || state === 'failed' ? iso(atMs) : null,
        extensions: i % 10 === 0 ? { eta: iso(atMs + 60_000), tags: { round } } : null,
      }),
    );
    if (i % 30 === 0) events.push(workerEvent(connectionId, atMs, { externalId: `w${i % 5}`, state: i % 60 === 0 ? 'online' : 'heartbeat', queues: ['q1'] }));
    if (i % 50 === 0) events.push(queueEvent(connectionId, atMs, { name: `q${i % 3}`, depth: i }));
  }
  events.push(events[0], events[1]); // duplicates
  for (let start = 0; start < events.length; start += 100) await ingestEvents(opened.engine, apiKey, events.slice(start, start + 100));
}

describe('snapshot + log round trip', () => {
  test('recovered state equals the live state, also for changes made while the snapshot was being written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jw-roundtrip-'));
    dirs.push(dir);
    const clock = new ManualClock(T0);
    const live = await openAt(dir, clock);
    const admin = await live.accounts.addUser('admin@example.com', 'a long password!', true);
    const session = await live.accounts.login('admin@example.com', 'a long password!', '127.0.0.1');
    const { connection, apiKey } = await live.connections.create(admin, 'prod');
    const other = await live.connections.create(admin, 'other');
    await workload(live, apiKey, connection.id, 1);
    await workload(live, other.apiKey, other.connection.id, 2);
    const actor = live.engine.connection(connection.id)!;
    const someIds = [...actor.jobs.values()].slice(0, 40).map((job) => job.id);
    await live.actions.bulk(admin, 'revoke', someIds);
    await live.actions.bulk(admin, 'retry', someIds);
    await live.engine.commit({ t: 'commands.acked', connectionId: connection.id, ids: actor.commands.oldestFirst(5).map((command) => command.id) });
    const [failedCommand] = actor.commands.oldestFirst(1);
    await live.engine.commit({ t: 'commands.acked', connectionId: connection.id, ids: [], failed: [{ id: failedCommand!.id, reason: 'arguments unknown' }], atMs: clock.nowMs() });

    // Snapshot while more events, actions and retention keep changing the same jobs.
    const snapshotting = live.store.writeSnapshot(live.engine.takeSnapshot());
    await workload(live, apiKey, connection.id, 3);
    await live.actions.bulk(admin, 'revoke', someIds.slice(0, 10));
    clock.advance(60_000);
    await live.engine.commit({ t: 'retention', atMs: T0 - 1_800_000 + LIMITS.retentionMs });
    await snapshotting;
    await workload(live, apiKey, connection.id, 4);

    const expected = dumpEngine(live.engine, clock.nowMs());
    await live.store.close();
    const recovered = await openAt(dir, clock);
    expect(recovered.report.snapshotSeq).toBeGreaterThan(0);
    expect(recovered.report.recordsReplayed).toBeGreaterThan(0);
    expect(dumpEngine(recovered.engine, clock.nowMs())).toEqual(expected);
    expect(recovered.accounts.requireUser(session.token).email).toBe('admin@example.com');
    expect(recovered.engine.accounts.connectionByKey(apiKey)?.id).toBe(connection.id);
    await recovered.store.close();
  });
});
