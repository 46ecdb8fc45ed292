/**
 * The accounts actor on its own (no HTTP, no password hashing): who exists, which session
 * is live, which key opens which connection, the bounds on sessions and connections, and
 * that a snapshot brings all of it back.
 */
import { describe, expect, test } from 'bun:test';
import type { AccountsRecord, Session, User } from '../../actors/accounts/account-records.ts';
import { AccountsActor, CONNECTIONS_PER_TEAM_MAX, normalizeEmail, SESSIONS_PER_USER_MAX } from '../../actors/accounts/accounts-actor.ts';
import { sha256Hex } from '../../actors/accounts/secrets.ts';
import { DomainError } from '../../actors/domain-error.ts';

const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const HOUR = 3_600_000;

function withUsers(...emails: string[]): { actor: AccountsActor; users: User[] } {
  const actor = new AccountsActor();
  const users = emails.map((email, index) => {
    const record = actor.decideCreateUser(email, `hash-${index}`, index === 0, T0);
    actor.evolve(record);
    return (record as Extract<AccountsRecord, { t: 'user.created' }>).user;
  });
  return { actor, users };
}

function domainErrorOf(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('expected a DomainError');
}

function session(actor: AccountsActor, user: User, tokenHash: string, atMs: number, ttlMs = HOUR): Session {
  const record = actor.decideCreateSession(user, tokenHash, ttlMs, atMs);
  actor.evolve(record);
  return (record as Extract<AccountsRecord, { t: 'session.created' }>).session;
}

describe('users', () => {
  test('a new user is stored with a normalized email and the given hash, admin flag and time', () => {
    const actor = new AccountsActor();
    const record = actor.decideCreateUser('  Ada@Example.COM ', 'the-hash', true, T0);
    expect(record).toEqual({
      t: 'user.created',
      user: { id: expect.any(String), email: 'ada@example.com', passwordHash: 'the-hash', isAdmin: true, createdAtMs: T0 },
    });
    actor.evolve(record);
    const user = actor.userByEmail('ADA@example.com ');
    expect(user?.passwordHash).toBe('the-hash');
    expect(actor.users.get(user!.id)).toBe(user);
  });

  test('an email taken in any case or spacing is a conflict naming it', () => {
    const { actor } = withUsers('ada@example.com');
    const error = domainErrorOf(() => actor.decideCreateUser(' ADA@example.com', 'h', false, T0));
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toBe("a user with email ' ADA@example.com' already exists");
  });

  test('normalizeEmail trims and lowercases', () => {
    expect(normalizeEmail('  MiXed@Case.Org\t')).toBe('mixed@case.org');
  });
});

describe('sessions', () => {
  test('a session is live until the millisecond it expires, then unknown', () => {
    const { actor, users } = withUsers('ada@example.com');
    const created = session(actor, users[0]!, 'token-hash', T0, HOUR);
    expect(created).toEqual({ tokenHash: 'token-hash', userId: users[0]!.id, createdAtMs: T0, expiresAtMs: T0 + HOUR });
    expect(actor.sessionUser('token-hash', T0 + HOUR - 1)).toBe(users[0]);
    expect(actor.sessionUser('token-hash', T0 + HOUR)).toBeUndefined();
    expect(actor.sessionUser('other-hash', T0)).toBeUndefined();
  });

  test('a deleted session is unknown; deleting one leaves the others', () => {
    const { actor, users } = withUsers('ada@example.com');
    session(actor, users[0]!, 'a', T0);
    session(actor, users[0]!, 'b', T0);
    actor.evolve({ t: 'session.deleted', tokenHash: 'a' });
    expect(actor.sessionUser('a', T0)).toBeUndefined();
    expect(actor.sessionUser('b', T0)).toBe(users[0]);
  });

  test(`a user keeps at most ${SESSIONS_PER_USER_MAX} sessions: a new one ends the oldest; other users keep theirs`, () => {
    const { actor, users } = withUsers('ada@example.com', 'bob@example.com');
    const [ada, bob] = users as [User, User];
    session(actor, bob, 'bob-0', T0);
    for (let i = 0; i < SESSIONS_PER_USER_MAX; i++) session(actor, ada, `ada-${i}`, T0 + i);
    expect(actor.sessionUser('ada-0', T0 + 100)).toBe(ada);

    session(actor, ada, 'ada-new', T0 + 100);

    expect(actor.sessionUser('ada-0', T0 + 100)).toBeUndefined();
    expect(actor.sessionUser('ada-1', T0 + 100)).toBe(ada);
    expect(actor.sessionUser('ada-new', T0 + 100)).toBe(ada);
    expect(actor.sessionUser('bob-0', T0 + 100)).toBe(bob);
    expect(actor.toSnapshot().sessions.filter((each) => each.userId === ada.id)).toHaveLength(SESSIONS_PER_USER_MAX);
  });

  test('the oldest by creation time is ended, also when sessions were recorded out of time order (a clock set back)', () => {
    const { actor, users } = withUsers('ada@example.com');
    const ada = users[0]!;
    for (let i = 0; i < SESSIONS_PER_USER_MAX; i++) session(actor, ada, `ada-${i}`, T0 + 100 - i);
    session(actor, ada, 'ada-new', T0 + 200);
    expect(actor.sessionUser(`ada-${SESSIONS_PER_USER_MAX - 1}`, T0 + 200)).toBeUndefined();
    expect(actor.sessionUser('ada-0', T0 + 200)).toBe(ada);
    expect(actor.sessionUser(`ada-${SESSIONS_PER_USER_MAX - 2}`, T0 + 200)).toBe(ada);
  });

  test('a new session drops every expired one, of any user, at the time in its record', () => {
    const { actor, users } = withUsers('ada@example.com', 'bob@example.com');
    const [ada, bob] = users as [User, User];
    session(actor, bob, 'bob-expires-at-t1', T0, HOUR);
    session(actor, bob, 'bob-live', T0, 2 * HOUR);
    session(actor, ada, 'ada-new', T0 + HOUR);
    expect(actor.toSnapshot().sessions.map((each) => each.tokenHash).sort()).toEqual(['ada-new', 'bob-live']);
  });
});

/** A team in `actor`, with `admin` as its admin. */
function team(actor: AccountsActor, name: string, admin: User): string {
  const created = actor.teams.decideCreate(name, T0);
  actor.evolve(created);
  const teamId = (created as Extract<AccountsRecord, { t: 'team.created' }>).team.id;
  actor.evolve(actor.teams.decideSetMember(teamId, admin, 'admin', T0));
  return teamId;
}

describe('connections', () => {
  test('a connection of a team stores the hash and a short prefix of its key, and the key finds it', () => {
    const { actor, users } = withUsers('ada@example.com');
    const teamId = team(actor, 'prod team', users[0]!);
    const apiKey = 'sk_abcdefghijklmnop';
    const record = actor.decideCreateConnection(users[0]!.id, 'prod', apiKey, T0, teamId);
    expect(record).toEqual({
      t: 'connection.created',
      connection: { id: expect.any(String), name: 'prod', ownerId: users[0]!.id, teamId, keyHash: sha256Hex(apiKey), keyPrefix: 'sk_abcdef', createdAtMs: T0 },
    });
    actor.evolve(record);
    expect(actor.connectionByKey(apiKey)?.name).toBe('prod');
    expect(actor.connectionByKey('sk_other')).toBeUndefined();
    expect(actor.connectionsOfTeamId(teamId).map((connection) => connection.name)).toEqual(['prod']);
    expect(actor.legacyConnections()).toEqual([]);
  });

  test('a name is unique per team, not across teams; an unknown team is not found', () => {
    const { actor, users } = withUsers('ada@example.com', 'bob@example.com');
    const [ada, bob] = [team(actor, 'ada', users[0]!), team(actor, 'bob', users[1]!)];
    actor.evolve(actor.decideCreateConnection(users[0]!.id, 'prod', 'sk_1', T0, ada));
    const error = domainErrorOf(() => actor.decideCreateConnection(users[1]!.id, 'prod', 'sk_2', T0, ada));
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toBe("a connection named 'prod' already exists in team 'ada'");
    actor.evolve(actor.decideCreateConnection(users[1]!.id, 'prod', 'sk_3', T0, bob));
    expect(actor.connectionsOfTeamId(bob)).toHaveLength(1);
    expect(domainErrorOf(() => actor.decideCreateConnection(users[0]!.id, 'x', 'sk_4', T0, 'no-such-team')).code).toBe('NOT_FOUND');
  });

  test(`a team owns at most ${CONNECTIONS_PER_TEAM_MAX} connections; another team is not limited by them`, () => {
    const { actor, users } = withUsers('ada@example.com', 'bob@example.com');
    const [ada, bob] = [team(actor, 'ada', users[0]!), team(actor, 'bob', users[1]!)];
    for (let i = 0; i < CONNECTIONS_PER_TEAM_MAX - 1; i++) actor.evolve(actor.decideCreateConnection(users[0]!.id, `c${i}`, `sk_${i}`, T0, ada));
    actor.evolve(actor.decideCreateConnection(users[0]!.id, 'last', 'sk_last', T0, ada)); // the 100th is allowed
    const error = domainErrorOf(() => actor.decideCreateConnection(users[0]!.id, 'one-too-many', 'sk_x', T0, ada));
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toBe(`a team can have at most ${CONNECTIONS_PER_TEAM_MAX} connections`);
    expect(() => actor.decideCreateConnection(users[1]!.id, 'bobs', 'sk_bob', T0, bob)).not.toThrow();
  });

  test('without a team (as before teams) a connection is its creator\'s alone, until moved into a team', () => {
    const { actor, users } = withUsers('ada@example.com');
    const created = actor.decideCreateConnection(users[0]!.id, 'old', 'sk_old', T0);
    actor.evolve(created);
    const id = (created as Extract<AccountsRecord, { t: 'connection.created' }>).connection.id;
    expect(actor.legacyConnections().map((connection) => connection.id)).toEqual([id]);
    const teamId = team(actor, 'ada', users[0]!);
    actor.evolve({ t: 'connection.moved', connectionId: id, teamId });
    expect(actor.legacyConnections()).toEqual([]);
    expect(actor.connectionsOfTeamId(teamId).map((connection) => connection.id)).toEqual([id]);
  });

  test('deleting removes the connection and its key; an unknown id is not found', () => {
    const { actor, users } = withUsers('ada@example.com');
    const created = actor.decideCreateConnection(users[0]!.id, 'prod', 'sk_1', T0, team(actor, 'ada', users[0]!));
    actor.evolve(created);
    const id = (created as Extract<AccountsRecord, { t: 'connection.created' }>).connection.id;
    const error = domainErrorOf(() => actor.decideDeleteConnection('unknown'));
    expect(error.code).toBe('NOT_FOUND');
    expect(error.message).toBe('connection not found');
    const deletion = actor.decideDeleteConnection(id);
    expect(deletion).toEqual({ t: 'connection.deleted', connectionId: id });
    actor.evolve(deletion);
    expect(actor.connections.has(id)).toBe(false);
    expect(actor.connectionByKey('sk_1')).toBeUndefined();
    actor.evolve(deletion); // replaying a deletion of something already gone changes nothing
    expect(actor.connections.size).toBe(0);
  });
});

describe('snapshot', () => {
  test('users, live sessions and connections come back from a snapshot, and find each other', () => {
    const { actor, users } = withUsers('ada@example.com', 'bob@example.com');
    session(actor, users[0]!, 'ada-session', T0);
    session(actor, users[1]!, 'bob-session', T0);
    actor.evolve(actor.decideCreateConnection(users[0]!.id, 'prod', 'sk_prod', T0));

    const restored = new AccountsActor();
    restored.restore(structuredClone(actor.toSnapshot()));

    expect(restored.toSnapshot()).toEqual(actor.toSnapshot());
    expect(restored.userByEmail('bob@example.com')?.id).toBe(users[1]!.id);
    expect(restored.sessionUser('ada-session', T0)?.email).toBe('ada@example.com');
    expect(restored.connectionByKey('sk_prod')?.name).toBe('prod');
  });
});
