import { afterEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../actors/clock.ts';
import { dumpEngine } from '../support/engine-dump.ts';
import { LIMITS, openAt, workload } from '../support/snapshot-workload.ts';
import { T0 } from '../support/test-app.ts';
import { accessOf, withOwnTeam } from '../support/team-access.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('snapshot + log round trip', () => {
  test('recovered state equals the live state, also for changes made while the snapshot was being written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jw-roundtrip-'));
    dirs.push(dir);
    const clock = new ManualClock(T0);
    const live = await openAt(dir, clock);
    const admin = await live.accounts.addUser('admin@example.com', 'a long password!', true);
    const session = await live.accounts.login('admin@example.com', 'a long password!', '127.0.0.1');
    const asAdmin = await withOwnTeam(live.engine, admin);
    const { connection, apiKey } = await live.connections.create(asAdmin, 'prod', undefined);
    const other = await live.connections.create(asAdmin, 'other', undefined);
    await workload(live, apiKey, connection.id, 1);
    await workload(live, other.apiKey, other.connection.id, 2);
    const actor = live.engine.connection(connection.id)!;
    const someIds = [...actor.jobs.values()].slice(0, 40).map((job) => job.id);
    await live.actions.bulk(asAdmin, 'revoke', someIds);
    await live.actions.bulk(asAdmin, 'retry', someIds);
    await live.engine.commit({ t: 'commands.acked', connectionId: connection.id, ids: actor.commands.oldestFirst(5).map((command) => command.id) });
    // retries the agent carried out: runs added by hand, a column of their own since format 5
    const retries = actor.commands.oldestFirst(1000).filter((command) => command.type === 'retry');
    await live.engine.commit({ t: 'commands.acked', connectionId: connection.id, ids: retries.slice(0, 6).map((command) => command.id), atMs: clock.nowMs() });
    expect([...actor.jobs.values()].filter((job) => job.manualRetries > 0).length).toBeGreaterThan(0);
    const [failedCommand] = actor.commands.oldestFirst(1);
    await live.engine.commit({ t: 'commands.acked', connectionId: connection.id, ids: [], failed: [{ id: failedCommand!.id, reason: 'arguments unknown' }], atMs: clock.nowMs() });

    // Snapshot while more events, actions and retention keep changing the same jobs.
    const snapshotting = live.store.writeSnapshot(live.engine.takeSnapshot());
    await workload(live, apiKey, connection.id, 3);
    await live.actions.bulk(asAdmin, 'revoke', someIds.slice(0, 10));
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
