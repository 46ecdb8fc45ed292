import { describe, expect, test } from 'bun:test';
import { AccountsActor } from '../../actors/accounts/accounts-actor.ts';
import { ConnectionActor } from '../../actors/connection/connection-actor.ts';
import { SnapshotRestorer, takeSnapshot } from '../../actors/engine-snapshot.ts';
import { decodeValue, encodeValue } from '../../persistence/record-codec.ts';
import { jobEvent } from '../support/events.ts';
import { T0 } from '../support/test-app.ts';
import { AuditLog } from '../../actors/audit/audit-log.ts';

const CONNECTION = '0190a000-0000-7000-8000-000000000001';
const limits = { dailyEventLimit: 0, dedupKeysMax: 1000, maxJobsPerConnection: 3, retentionMs: 86_400_000 };

function ingest(actor: ConnectionActor, externalIds: string[], seconds: number): void {
  const events = externalIds.map((externalId) => jobEvent(CONNECTION, T0 + seconds * 1000, { externalId, state: 'completed', error: `${externalId} failed` }));
  actor.evolve(actor.decideIngest(events, T0 + 60_000).record!);
}

describe('a snapshot while jobs are evicted and their rows reused', () => {
  test('a job removed while the snapshot is written, its row taken by a new job, is written as it was when the snapshot began', () => {
    const actor = new ConnectionActor(CONNECTION, limits);
    ingest(actor, ['a', 'b', 'c'], 1);
    const atStart = [...actor.jobs.values()];
    const snapshot = takeSnapshot(new AccountsActor(), new AuditLog(), new Map([[CONNECTION, actor]]), T0);
    const rowsAtStart = atStart.map((job) => actor.jobs.rowOf(job.id));
    ingest(actor, ['d', 'e'], 2); // evicts a and b
    ingest(actor, ['f', 'g'], 3); // takes the rows a and b left, evicts c and d
    ingest(actor, ['f'], 4); // changes a reused row: its copy stays the job the row held at the start
    expect(['f', 'g'].map((externalId) => actor.jobs.rowOfExternalId(externalId)).sort()).toEqual(rowsAtStart.slice(0, 2).sort());
    const encoded = [...snapshot.chunks].map((chunk) => encodeValue(chunk));
    const restoredActors = new Map<string, ConnectionActor>();
    const restorer = new SnapshotRestorer(new AccountsActor(), new AuditLog(), restoredActors, limits);
    for (const bytes of encoded) restorer.restore(decodeValue(bytes));
    expect([...restoredActors.get(CONNECTION)!.jobs.values()]).toEqual(atStart);
    expect(actor.jobs.beforeMutate).toBeNull(); // released once written
  });
});
