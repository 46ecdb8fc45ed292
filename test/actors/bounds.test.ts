/** Memory bounds of per-job and per-user state, at and past their edge. */
import { describe, expect, test } from 'bun:test';
import { AccountsActor, SESSIONS_PER_USER_MAX } from '../../actors/accounts/accounts-actor.ts';
import { CommandQueue } from '../../actors/connection/command-queue.ts';
import { ConnectionActor } from '../../actors/connection/connection-actor.ts';
import { collapsedHistory } from '../../actors/connection/job-record.ts';
import { HISTORY_ENTRIES_MAX } from '../../actors/connection/job-history.ts';
import { jobEvent } from '../support/events.ts';
import { T0 } from '../support/test-app.ts';

describe('bounds', () => {
  test(`given ${SESSIONS_PER_USER_MAX + 1} sessions of one user, the oldest is dropped`, () => {
    const accounts = new AccountsActor();
    const user = { id: 'u1', email: 'a@example.com', passwordHash: 'x', isAdmin: false, createdAtMs: T0 };
    accounts.evolve({ t: 'user.created', user });
    for (let i = 0; i <= SESSIONS_PER_USER_MAX; i++) {
      accounts.evolve(accounts.decideCreateSession(user, `token-${i}`, 86_400_000, T0 + i));
      if (i === SESSIONS_PER_USER_MAX - 1) expect(accounts.sessionUser('token-0', T0 + i)).toBeDefined();
    }
    expect(accounts.sessionUser('token-0', T0 + 100)).toBeUndefined();
    expect(accounts.sessionUser('token-1', T0 + 100)?.id).toBe('u1');
  });

  test(`given more than ${HISTORY_ENTRIES_MAX} events for one job, the oldest history entries go first`, () => {
    const actor = new ConnectionActor('c', { dailyEventLimit: 0, dedupKeysMax: 1000, maxJobsPerConnection: 10, retentionMs: 86_400_000 });
    const states = ['active', 'retrying'];
    const events = Array.from({ length: HISTORY_ENTRIES_MAX + 1 }, (_, i) => jobEvent('c', T0 + i, { state: states[i % 2] }));
    const { record } = actor.decideIngest(events, T0);
    actor.evolve(record!);
    const history = collapsedHistory(actor.jobs.getByExternalId('task-1')!);
    expect(history).toHaveLength(HISTORY_ENTRIES_MAX);
    expect(history[0]).toEqual({ state: 'retrying', atMs: T0 + 1 });
  });

  test('given more pending commands than the bound, the oldest is dropped', () => {
    const queue = new CommandQueue(2);
    const command = (id: string) => ({ id, type: 'revoke' as const, jobId: id, externalId: id, name: 'n', queue: null, createdAtMs: T0 });
    for (const id of ['a', 'b', 'c']) queue.push(command(id));
    expect(queue.oldestFirst(10).map((pending) => pending.id)).toEqual(['b', 'c']);
  });
});
