/**
 * Teams in the accounts actor on their own: names, members and roles, the bounds on each,
 * the rule that a team keeps an admin, what a snapshot brings back (and what one from
 * before teams does), and the one-time upgrade of data from before teams.
 */
import { describe, expect, test } from 'bun:test';
import { Access } from '../../actors/accounts/access.ts';
import type { AccountsRecord, User } from '../../actors/accounts/account-records.ts';
import { AccountsActor } from '../../actors/accounts/accounts-actor.ts';
import { MEMBERS_PER_TEAM_MAX, TEAM_NAME_CHARS_MAX, TEAMS_MAX, TEAMS_PER_USER_MAX } from '../../actors/accounts/team-book.ts';
import { DomainError } from '../../actors/domain-error.ts';

const T0 = Date.parse('2026-11-21T10:00:00.000Z');

function user(actor: AccountsActor, email: string, isAdmin = false): User {
  const record = actor.decideCreateUser(email, 'hash', isAdmin, T0);
  actor.evolve(record);
  return (record as Extract<AccountsRecord, { t: 'user.created' }>).user;
}

function team(actor: AccountsActor, name: string): string {
  const record = actor.teams.decideCreate(name, T0);
  actor.evolve(record);
  return (record as Extract<AccountsRecord, { t: 'team.created' }>).team.id;
}

function refusal(run: () => unknown): { code: string; message: string } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return { code: (error as DomainError).code, message: (error as DomainError).message };
  }
  throw new Error('expected a refusal');
}

describe('teams', () => {
  test('names are trimmed, unique whatever their case, and at most 100 characters; renaming keeps the rule', () => {
    const actor = new AccountsActor();
    const id = team(actor, '  Production ');
    expect(actor.teams.team(id)?.name).toBe('Production');
    expect(refusal(() => actor.teams.decideCreate('production', T0))).toEqual({ code: 'CONFLICT', message: "a team named 'production' already exists" });
    expect(refusal(() => actor.teams.decideCreate('x'.repeat(TEAM_NAME_CHARS_MAX + 1), T0)).code).toBe('VALIDATION_ERROR');
    expect(() => actor.teams.decideCreate('x'.repeat(TEAM_NAME_CHARS_MAX), T0)).not.toThrow();
    const other = team(actor, 'staging');
    expect(refusal(() => actor.teams.decideRename(other, 'PRODUCTION')).code).toBe('CONFLICT');
    actor.evolve(actor.teams.decideRename(id, 'production')); // its own name in another case
    expect(actor.teams.teamByName('PRODUCTION')?.id).toBe(id);
    expect(refusal(() => actor.teams.decideRename('nope', 'x')).code).toBe('NOT_FOUND');
  });

  test(`at most ${TEAMS_MAX} teams`, () => {
    const actor = new AccountsActor();
    for (let i = 0; i < TEAMS_MAX; i++) team(actor, `t${i}`);
    expect(refusal(() => actor.teams.decideCreate('one more', T0))).toEqual({ code: 'CONFLICT', message: `there can be at most ${TEAMS_MAX} teams` });
  });

  test('members join with a role, change it (keeping when they joined) and leave; memberships are indexed both ways', () => {
    const actor = new AccountsActor();
    const [ada, bob] = [user(actor, 'ada@example.com'), user(actor, 'bob@example.com')];
    const id = team(actor, 'production');
    actor.evolve(actor.teams.decideSetMember(id, ada, 'admin', T0));
    actor.evolve(actor.teams.decideSetMember(id, bob, 'viewer', T0 + 1));
    actor.evolve(actor.teams.decideSetMember(id, bob, 'operator', T0 + 2));
    expect(actor.teams.membersOf(id)).toEqual([
      { teamId: id, userId: ada.id, role: 'admin', sinceMs: T0 },
      { teamId: id, userId: bob.id, role: 'operator', sinceMs: T0 + 1 },
    ]);
    expect(actor.teams.membershipsOf(bob.id).map((membership) => membership.role)).toEqual(['operator']);
    actor.evolve(actor.teams.decideRemoveMember(id, bob.id));
    expect(actor.teams.roleOf(id, bob.id)).toBeNull();
    expect(refusal(() => actor.teams.decideRemoveMember(id, bob.id))).toEqual({ code: 'NOT_FOUND', message: 'member not found' });
  });

  test('a team keeps an admin: the last one can be neither demoted nor removed; with a second admin both can', () => {
    const actor = new AccountsActor();
    const [ada, bob] = [user(actor, 'ada@example.com'), user(actor, 'bob@example.com')];
    const id = team(actor, 'production');
    actor.evolve(actor.teams.decideSetMember(id, ada, 'admin', T0));
    const lastAdmin = { code: 'CONFLICT', message: "team 'production' would have no admin left; make another member admin first" };
    expect(refusal(() => actor.teams.decideSetMember(id, ada, 'operator', T0))).toEqual(lastAdmin);
    expect(refusal(() => actor.teams.decideRemoveMember(id, ada.id))).toEqual(lastAdmin);
    actor.evolve(actor.teams.decideSetMember(id, bob, 'admin', T0));
    actor.evolve(actor.teams.decideSetMember(id, ada, 'viewer', T0));
    expect(refusal(() => actor.teams.decideRemoveMember(id, bob.id))).toEqual(lastAdmin);
  });

  test(`at most ${MEMBERS_PER_TEAM_MAX} members per team and ${TEAMS_PER_USER_MAX} teams per user; a role change is not a new member`, () => {
    const actor = new AccountsActor();
    const crowded = team(actor, 'crowded');
    const users = Array.from({ length: MEMBERS_PER_TEAM_MAX }, (_, i) => user(actor, `u${i}@example.com`));
    for (const each of users) actor.evolve(actor.teams.decideSetMember(crowded, each, 'viewer', T0));
    const late = user(actor, 'late@example.com');
    expect(refusal(() => actor.teams.decideSetMember(crowded, late, 'viewer', T0))).toEqual({ code: 'CONFLICT', message: `team 'crowded' has ${MEMBERS_PER_TEAM_MAX} members, the most a team can have` });
    expect(() => actor.teams.decideSetMember(crowded, users[0]!, 'operator', T0)).not.toThrow();

    const busy = user(actor, 'busy@example.com');
    for (let i = 0; i < TEAMS_PER_USER_MAX; i++) actor.evolve(actor.teams.decideSetMember(team(actor, `team ${i}`), busy, 'viewer', T0));
    expect(refusal(() => actor.teams.decideSetMember(team(actor, 'one more'), busy, 'viewer', T0))).toEqual({ code: 'CONFLICT', message: `busy@example.com is in ${TEAMS_PER_USER_MAX} teams, the most a user can be in` });
  });

  test('deleting a team takes its memberships; a team that owns connections is not deleted', () => {
    const actor = new AccountsActor();
    const ada = user(actor, 'ada@example.com');
    const id = team(actor, 'production');
    actor.evolve(actor.teams.decideSetMember(id, ada, 'admin', T0));
    actor.evolve(actor.decideCreateConnection(ada.id, 'prod', 'sk_prod', T0, id));
    expect(refusal(() => actor.teams.decideDelete(id, actor.connectionCountOf(id)))).toEqual({ code: 'CONFLICT', message: "team 'production' still has 1 connection; delete them first" });
    actor.evolve(actor.decideDeleteConnection(actor.connectionsOfTeamId(id)[0]!.id));
    actor.evolve(actor.teams.decideDelete(id, actor.connectionCountOf(id)));
    expect(actor.teams.membershipsOf(ada.id)).toEqual([]);
    expect(actor.teams.teamByName('production')).toBeUndefined();
  });
});

describe('what a user may read', () => {
  test('a role on a connection is the role in its team; no team, no access; the instance admin reads no team it is not in', () => {
    const actor = new AccountsActor();
    const [root, ada, bob] = [user(actor, 'root@example.com', true), user(actor, 'ada@example.com'), user(actor, 'bob@example.com')];
    const [production, staging] = [team(actor, 'production'), team(actor, 'staging')];
    actor.evolve(actor.teams.decideSetMember(production, ada, 'operator', T0));
    actor.evolve(actor.teams.decideSetMember(staging, ada, 'viewer', T0));
    actor.evolve(actor.teams.decideSetMember(staging, bob, 'admin', T0));
    actor.evolve(actor.decideCreateConnection(ada.id, 'prod', 'sk_1', T0, production));
    actor.evolve(actor.decideCreateConnection(bob.id, 'stage', 'sk_2', T0, staging));
    const grants = (who: User) => new Access(who, actor).connections().map(({ connection, role }) => `${connection.name}:${role}`);
    expect(grants(ada)).toEqual(['prod:operator', 'stage:viewer']);
    expect(grants(bob)).toEqual(['stage:admin']);
    expect(grants(root)).toEqual([]);
    expect(new Access(root, actor).visibleTeams().map(({ team, role }) => `${team.name}:${role}`)).toEqual(['production:null', 'staging:null']);
    const stage = actor.connectionsOfTeamId(staging)[0]!.id;
    expect(new Access(bob, actor).connections(stage)).toHaveLength(1);
    expect(new Access(bob, actor).connections(actor.connectionsOfTeamId(production)[0]!.id)).toEqual([]);
    expect(refusal(() => new Access(ada, actor).requireConnection(stage, 'operator', 'revoke jobs'))).toEqual({
      code: 'FORBIDDEN',
      message: "to revoke jobs you need the operator role in team 'staging'; yours is viewer",
    });
    expect(refusal(() => new Access(root, actor).requireConnection(stage, 'viewer', 'read')).code).toBe('NOT_FOUND');
  });
});

describe('snapshots and the upgrade from before teams', () => {
  test('teams, members and the era come back from a snapshot', () => {
    const actor = new AccountsActor();
    const ada = user(actor, 'ada@example.com');
    const id = team(actor, 'production');
    actor.evolve(actor.teams.decideSetMember(id, ada, 'admin', T0));
    actor.evolve(actor.decideCreateConnection(ada.id, 'prod', 'sk_1', T0, id));
    const restored = new AccountsActor();
    restored.restore(structuredClone(actor.toSnapshot()));
    expect(restored.toSnapshot()).toEqual(actor.toSnapshot());
    expect(restored.teamsEra).toBe(true);
    expect(restored.connectionsOfTeamId(id).map((connection) => connection.name)).toEqual(['prod']);
  });

  test('an accounts chunk from before teams restores its connections without a team, each its creator\'s alone', () => {
    const old = { users: [{ id: 'u1', email: 'ada@example.com', passwordHash: 'h', isAdmin: true, createdAtMs: T0 }], sessions: [], connections: [{ id: 'c1', name: 'prod', ownerId: 'u1', keyHash: 'k', keyPrefix: 'sk_', createdAtMs: T0 }] };
    const actor = new AccountsActor();
    actor.restore(old);
    expect(actor.teamsEra).toBe(false);
    expect(actor.legacyConnections().map((connection) => connection.id)).toEqual(['c1']);
    expect(new Access(actor.users.get('u1')!, actor).connections().map(({ connection, role }) => [connection.id, role])).toEqual([['c1', 'admin']]);
  });

  test('the upgrade gives every user a team of their own, as its admin, with the connections they created; once', () => {
    const actor = new AccountsActor();
    const [ada, bob] = [user(actor, 'ada@example.com', true), user(actor, 'bob@example.com')];
    for (const [owner, name] of [[ada, 'a1'], [bob, 'b1'], [ada, 'a2']] as const) actor.evolve(actor.decideCreateConnection(owner.id, name, `sk_${name}`, T0));
    const records = actor.decideUpgradeToTeams(T0 + 5);
    expect(records.map((record) => record.t)).toEqual(['team.created', 'member.set', 'team.created', 'member.set', 'connection.moved', 'connection.moved', 'connection.moved']);
    for (const record of records) actor.evolve(record);
    const teamOf = (who: User) => actor.teams.membershipsOf(who.id).map((membership) => [actor.teams.team(membership.teamId)!.name, membership.role]);
    expect(teamOf(ada)).toEqual([['ada@example.com', 'admin']]);
    expect(teamOf(bob)).toEqual([['bob@example.com', 'admin']]);
    expect(new Access(ada, actor).connections().map(({ connection }) => connection.name)).toEqual(['a1', 'a2']);
    expect(new Access(bob, actor).connections().map(({ connection }) => connection.name)).toEqual(['b1']);
    expect(actor.legacyConnections()).toEqual([]);
    expect(actor.decideUpgradeToTeams(T0 + 6)).toEqual([]);
  });

  test('nothing to upgrade on a new installation, nor after the last team was deleted', () => {
    const fresh = new AccountsActor();
    expect(fresh.decideUpgradeToTeams(T0)).toEqual([]);
    const actor = new AccountsActor();
    user(actor, 'ada@example.com');
    const id = team(actor, 'gone');
    actor.evolve(actor.teams.decideDelete(id, 0));
    expect(actor.decideUpgradeToTeams(T0)).toEqual([]);
  });
});
