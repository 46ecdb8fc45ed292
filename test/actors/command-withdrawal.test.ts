/**
 * Every way a command ends without the job system carrying it out withdraws its action:
 * the agent's refusal and the wait for confirmation (test/routes/job-action-truth.test.ts),
 * and here the two bounds: retention still finding it pending, and the per-connection bound
 * on pending commands dropping the oldest. The history column gives the entry back exactly.
 */
import type { JobCommand } from '../../actors/connection/command-types.ts';
import { describe, expect, test } from 'bun:test';
import { COMMANDS_PER_CONNECTION_MAX, ConnectionActor } from '../../actors/connection/connection-actor.ts';
import { HistoryColumn } from '../../actors/connection/history-column.ts';
import { packHistoryEntry } from '../../actors/connection/job-history.ts';
import { jobEvent } from '../support/events.ts';
import { T0 } from '../support/test-app.ts';

const LIMITS = { dailyEventLimit: 0, dedupKeysMax: 10, maxJobsPerConnection: 20_000, retentionMs: 3_600_000, commandConfirmMs: 7_200_000 };

function actorWithActiveJobs(count: number): ConnectionActor {
  const actor = new ConnectionActor('c1', LIMITS);
  const events = Array.from({ length: count }, (_, i) => jobEvent('c1', T0, { externalId: `job-${i}`, state: 'active' }));
  for (let start = 0; start < events.length; start += 1000) {
    const { record } = actor.decideIngest(events.slice(start, start + 1000), T0);
    actor.evolve(record!);
  }
  return actor;
}

function revoke(actor: ConnectionActor, externalIds: string[], atMs: number): void {
  const { record } = actor.decideJobAction('revoke', externalIds.map((externalId) => actor.jobs.getByExternalId(externalId)!.id), atMs);
  actor.evolve(record!);
}

describe('withdrawn by the bounds', () => {
  test('a command retention finds still pending (the wait is longer than retention) is withdrawn as expired before it goes', () => {
    const actor = actorWithActiveJobs(2);
    revoke(actor, ['job-0'], T0 + 1_000);
    // job-1 has news after the cutoff, so it stays; its revoke, older than the cutoff, does not
    actor.evolve(actor.decideIngest([jobEvent('c1', T0 + 3_600_000 + 5_000, { externalId: 'job-0', state: 'active', progress: 0.5 })], T0 + 3_600_000 + 5_000).record!);
    actor.expire(T0 + 3_600_000 + 2_000);
    expect(actor.commands.size).toBe(0);
    // the revoke never happened: its cancelled entry left the history
    expect(actor.jobs.getByExternalId('job-0')!.history.map((entry) => entry % 16)).toEqual([3, 3]);
    // its outcome went with retention too: nothing is pending, nothing is shown
    expect(actor.commandOutcomes.ofJob(actor.jobs.getByExternalId('job-0')!.id)).toBeUndefined();
  });

  test(`past ${COMMANDS_PER_CONNECTION_MAX} pending commands the oldest is dropped and withdrawn as expired: its job is active again`, () => {
    const actor = actorWithActiveJobs(COMMANDS_PER_CONNECTION_MAX + 1);
    const ids = Array.from({ length: COMMANDS_PER_CONNECTION_MAX }, (_, i) => `job-${i}`);
    revoke(actor, ids, T0 + 1_000);
    expect(actor.jobs.getByExternalId('job-0')!.state).toBe('cancelled');
    const changes = actor.evolve(actor.decideJobAction('revoke', [actor.jobs.getByExternalId(`job-${COMMANDS_PER_CONNECTION_MAX}`)!.id], T0 + 2_000).record!);
    const first = actor.jobs.getByExternalId('job-0')!;
    expect(first.state).toBe('active');
    expect(actor.commandOutcomes.ofJob(first.id)).toMatchObject({ status: 'expired', completedAtMs: T0 + 2_000 });
    expect(actor.commands.size).toBe(COMMANDS_PER_CONNECTION_MAX);
    expect((actor.commands.oldestFirst(1)[0] as JobCommand).jobId).toBe(actor.jobs.getByExternalId('job-1')!.id);
    expect(changes.jobs.has(actor.jobs.refOf(actor.jobs.rowOf(first.id)))).toBe(true); // a watching dashboard hears of it
  });
});

describe('the history column takes an entry back', () => {
  test('the newest equal entry goes, the others stay in order; an entry not there, or a row\'s only one, stays', () => {
    const column = new HistoryColumn();
    column.ensureRows(2);
    for (const [atMs, code] of [[1, 1], [2, 3], [3, 7], [3, 7], [4, 6]] as const) column.insert(0, atMs, code);
    expect(column.remove(0, 3, 6)).toBe(false);
    expect(column.remove(0, 3, 7)).toBe(true);
    expect(column.copy(0)).toEqual([packHistoryEntry(1, 1), packHistoryEntry(2, 3), packHistoryEntry(3, 7), packHistoryEntry(4, 6)]);
    expect(column.remove(0, 4, 6)).toBe(true);
    expect(column.last(0)).toBe(packHistoryEntry(3, 7));
    column.insert(1, 5, 1);
    expect(column.remove(1, 5, 1)).toBe(false);
    expect(column.length(1)).toBe(1);
  });
});
