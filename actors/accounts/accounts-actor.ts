/**
 * Users (with their password links), sessions, teams with their members, and connections
 * (with their key hashes). Decisions that need a slow password hash take the hash as
 * input, so `decide*` stays synchronous and pure.
 */
import { DomainError } from '../domain-error.ts';
import { newId } from '../ids.ts';
import type { AccountsRecord, Connection, PasswordLink, SavedView, Session, SsoIdentityKey, User } from './account-records.ts';
import { PasswordLinks } from './password-links.ts';
import { SavedViewBook } from './saved-views.ts';
import { keyPrefixOf, sha256Hex } from './secrets.ts';
import { TEAM_NAME_CHARS_MAX, TeamBook, type TeamBookSnapshot } from './team-book.ts';

export const PASSWORD_CHARS_MIN = 12;
export const CONNECTIONS_PER_TEAM_MAX = 100;
export const SESSIONS_PER_USER_MAX = 50;

export interface AccountsSnapshot {
  users: User[];
  sessions: Session[];
  connections: Connection[];
  /** absent in snapshots written before teams existed */
  teams?: TeamBookSnapshot;
  /** whether a team was ever made: data from before teams is upgraded once (absent before teams) */
  teamsEra?: boolean;
  /** waiting invitations and password resets (absent before them) */
  passwordLinks?: PasswordLink[];
  /** the teams' saved views of the jobs list (absent before format 9) */
  views?: SavedView[];
}

export class AccountsActor {
  readonly users = new Map<string, User>();
  private readonly usersByEmail = new Map<string, User>();
  private readonly usersBySso = new Map<string, User>();
  private readonly sessions = new Map<string, Session>();
  readonly passwordLinks = new PasswordLinks();
  readonly teams = new TeamBook();
  readonly views = new SavedViewBook();
  readonly connections = new Map<string, Connection>();
  private readonly connectionsByKeyHash = new Map<string, Connection>();
  private readonly connectionsOfTeam = new Map<string, Set<string>>();
  /** connections from before teams, until the upgrade moves them (normally none) */
  private readonly connectionsWithoutTeam = new Set<string>();
  /**
   * A team was made at some point: the data is of a version with teams. Until then, the
   * first start upgrades what an older version left (each user gets their own team).
   */
  teamsEra = false;

  userByEmail(email: string): User | undefined {
    return this.usersByEmail.get(normalizeEmail(email));
  }

  userBySso(sso: SsoIdentityKey): User | undefined {
    return this.usersBySso.get(ssoKey(sso));
  }

  /** The live session for a token, or undefined when unknown, expired, or its user disabled. */
  sessionUser(tokenHash: string, nowMs: number): User | undefined {
    const session = this.sessions.get(tokenHash);
    if (session === undefined || session.expiresAtMs <= nowMs) return undefined;
    const user = this.users.get(session.userId);
    return user?.disabled === true ? undefined : user;
  }

  /** The instance admins who may sign in. */
  activeInstanceAdmins(): User[] {
    return [...this.users.values()].filter((user) => user.isAdmin && user.disabled !== true);
  }

  connectionByKey(apiKey: string): Connection | undefined {
    return this.connectionsByKeyHash.get(sha256Hex(apiKey));
  }

  /** The connections of a team, oldest first. */
  connectionsOfTeamId(teamId: string): Connection[] {
    const ids = this.connectionsOfTeam.get(teamId);
    return ids === undefined ? [] : [...ids].map((id) => this.connections.get(id)!).sort((a, b) => a.createdAtMs - b.createdAtMs);
  }

  /** Connections an older version made, not yet moved into a team: each is its creator's alone. */
  legacyConnections(): Connection[] {
    return [...this.connectionsWithoutTeam].map((id) => this.connections.get(id)!);
  }

  connectionCountOf(teamId: string): number {
    return this.connectionsOfTeam.get(teamId)?.size ?? 0;
  }

  /** `sso`: a user made by their first single sign-on (no password). */
  decideCreateUser(email: string, passwordHash: string, isAdmin: boolean, nowMs: number, sso?: SsoIdentityKey): AccountsRecord {
    if (this.userByEmail(email) !== undefined) {
      throw new DomainError('CONFLICT', `a user with email '${email}' already exists`);
    }
    return {
      t: 'user.created',
      user: { id: newId(), email: normalizeEmail(email), passwordHash, isAdmin, createdAtMs: nowMs, ...(sso === undefined ? {} : { sso }) },
    };
  }

  decideLinkSso(userId: string, sso: SsoIdentityKey): AccountsRecord {
    this.existingUser(userId);
    if (this.userBySso(sso) !== undefined) throw new DomainError('CONFLICT', 'this single sign-on identity is linked to another user');
    return { t: 'user.sso-linked', userId, sso };
  }

  /** `byUserId`: who disables; nobody disables themselves, nor the last instance admin who may sign in. */
  decideDisable(userId: string, disabled: boolean, byUserId: string): AccountsRecord {
    const user = this.existingUser(userId);
    if (disabled && userId === byUserId) throw new DomainError('CONFLICT', 'you cannot disable yourself');
    if (disabled && user.isAdmin && this.activeInstanceAdmins().every((admin) => admin.id === userId)) {
      throw new DomainError('CONFLICT', `${user.email} is the last instance admin who may sign in; make another user instance admin first`);
    }
    return { t: 'user.disabled', userId, disabled };
  }

  decideRemoveUser(userId: string, byUserId: string): AccountsRecord {
    const user = this.existingUser(userId);
    if (userId === byUserId) throw new DomainError('CONFLICT', 'you cannot remove yourself');
    if (user.isAdmin && this.activeInstanceAdmins().every((admin) => admin.id === userId)) {
      throw new DomainError('CONFLICT', `${user.email} is the last instance admin who may sign in; make another user instance admin first`);
    }
    return { t: 'user.removed', userId };
  }

  /** A password link for `userId`, to be shown once by its token (of which `tokenHash` is the hash). */
  decidePasswordLink(userId: string, purpose: PasswordLink['purpose'], tokenHash: string, ttlMs: number, nowMs: number): AccountsRecord {
    this.existingUser(userId);
    return { t: 'password-link.created', link: this.passwordLinks.decideCreate({ tokenHash, userId, purpose, createdAtMs: nowMs, expiresAtMs: nowMs + ttlMs }) };
  }

  decideSetPassword(userId: string, passwordHash: string, options: { keepSession: string | null; link: string | null }): AccountsRecord {
    this.existingUser(userId);
    return { t: 'user.password', userId, passwordHash, keepSession: options.keepSession, link: options.link };
  }

  decideCreateSession(user: User, tokenHash: string, ttlMs: number, nowMs: number): AccountsRecord {
    return {
      t: 'session.created',
      session: { tokenHash, userId: user.id, createdAtMs: nowMs, expiresAtMs: nowMs + ttlMs },
    };
  }

  /**
   * Who may create one in `teamId` is the caller's to check (an admin of the team). Without
   * a team (engine-level tools and tests only; every route names one) the connection is its
   * creator's alone, as before teams.
   */
  decideCreateConnection(creatorId: string, name: string, apiKey: string, nowMs: number, teamId?: string): AccountsRecord {
    const team = teamId === undefined ? undefined : this.teams.team(teamId);
    if (teamId !== undefined && team === undefined) throw new DomainError('NOT_FOUND', 'team not found');
    const owned = team === undefined ? this.legacyConnections().filter((connection) => connection.ownerId === creatorId) : this.connectionsOfTeamId(team.id);
    if (owned.some((connection) => connection.name === name)) {
      throw new DomainError('CONFLICT', `a connection named '${name}' already exists${team === undefined ? '' : ` in team '${team.name}'`}`);
    }
    if (owned.length >= CONNECTIONS_PER_TEAM_MAX) {
      throw new DomainError('CONFLICT', `a team can have at most ${CONNECTIONS_PER_TEAM_MAX} connections`);
    }
    return {
      t: 'connection.created',
      connection: {
        id: newId(),
        name,
        ownerId: creatorId,
        ...(teamId === undefined ? {} : { teamId }),
        keyHash: sha256Hex(apiKey),
        keyPrefix: keyPrefixOf(apiKey),
        createdAtMs: nowMs,
      },
    };
  }

  decideDeleteConnection(connectionId: string): AccountsRecord {
    if (!this.connections.has(connectionId)) throw new DomainError('NOT_FOUND', 'connection not found');
    return { t: 'connection.deleted', connectionId };
  }

  /**
   * The upgrade from a version without teams, decided once: every user gets a team of
   * their own, named after their email, as its admin, and the connections they created
   * move into it. Empty when there is nothing to upgrade (teams exist, or no users yet).
   */
  decideUpgradeToTeams(nowMs: number): AccountsRecord[] {
    if (this.teamsEra) return [];
    const records: AccountsRecord[] = [];
    const teamOfUser = new Map<string, string>();
    const taken = new Set<string>();
    for (const user of this.users.values()) {
      // room left for a ' (n)' suffix within the name's limit
      const name = uniqueName(user.email.slice(0, TEAM_NAME_CHARS_MAX - 6), taken);
      taken.add(name.toLowerCase());
      const team = { id: newId(), name, createdAtMs: nowMs };
      teamOfUser.set(user.id, team.id);
      records.push({ t: 'team.created', team }, { t: 'member.set', membership: { teamId: team.id, userId: user.id, role: 'admin', sinceMs: nowMs } });
    }
    for (const connection of this.connections.values()) {
      const teamId = teamOfUser.get(connection.ownerId);
      if (connection.teamId === undefined && teamId !== undefined) records.push({ t: 'connection.moved', connectionId: connection.id, teamId });
    }
    return records;
  }

  evolve(record: AccountsRecord): void {
    switch (record.t) {
      case 'user.created':
        this.users.set(record.user.id, record.user);
        this.usersByEmail.set(record.user.email, record.user);
        if (record.user.sso !== undefined) this.usersBySso.set(ssoKey(record.user.sso), record.user);
        return;
      case 'session.created':
        this.sessions.set(record.session.tokenHash, record.session);
        this.dropOldestSessions(record.session.userId, record.session.createdAtMs);
        return;
      case 'session.deleted':
        this.sessions.delete(record.tokenHash);
        return;
      case 'user.disabled':
      case 'user.removed':
      case 'user.password':
      case 'user.sso-linked':
      case 'password-link.created':
        this.evolveUser(record);
        return;
      case 'team.created':
        this.teamsEra = true;
        this.teams.evolve(record);
        return;
      case 'team.renamed':
      case 'member.set':
      case 'member.removed':
        this.teams.evolve(record);
        return;
      case 'team.deleted':
        this.teams.evolve(record);
        this.views.removeTeam(record.teamId);
        this.connectionsOfTeam.delete(record.teamId);
        return;
      case 'view.saved':
      case 'view.deleted':
        this.views.evolve(record);
        return;
      case 'connection.created':
        this.connections.set(record.connection.id, record.connection);
        this.connectionsByKeyHash.set(record.connection.keyHash, record.connection);
        this.placeConnection(record.connection);
        return;
      case 'connection.moved': {
        const connection = this.connections.get(record.connectionId);
        if (connection === undefined) return;
        this.unplaceConnection(connection);
        connection.teamId = record.teamId;
        this.placeConnection(connection);
        return;
      }
      case 'connection.deleted': {
        const connection = this.connections.get(record.connectionId);
        if (connection === undefined) return;
        this.connections.delete(connection.id);
        this.connectionsByKeyHash.delete(connection.keyHash);
        this.unplaceConnection(connection);
        return;
      }
    }
  }

  /** A user's own changes: disabled or enabled, removed, a new password, a password link, a single sign-on identity. */
  private evolveUser(record: Extract<AccountsRecord, { t: 'user.disabled' | 'user.removed' | 'user.password' | 'user.sso-linked' | 'password-link.created' }>): void {
    switch (record.t) {
      case 'user.disabled': {
        const user = this.users.get(record.userId);
        if (user === undefined) return;
        if (record.disabled) {
          user.disabled = true;
          this.endSessionsOf(user.id, null);
        } else delete user.disabled;
        return;
      }
      case 'user.removed': {
        const user = this.users.get(record.userId);
        if (user === undefined) return;
        this.users.delete(user.id);
        this.usersByEmail.delete(user.email);
        if (user.sso !== undefined) this.usersBySso.delete(ssoKey(user.sso));
        this.endSessionsOf(user.id, null);
        this.teams.removeUser(user.id);
        this.passwordLinks.removeOfUser(user.id);
        return;
      }
      case 'user.password': {
        const user = this.users.get(record.userId);
        if (user === undefined) return;
        user.passwordHash = record.passwordHash;
        this.endSessionsOf(user.id, record.keepSession);
        if (record.link !== null) this.passwordLinks.removeOfUser(user.id);
        return;
      }
      case 'password-link.created':
        if (this.users.has(record.link.userId)) this.passwordLinks.add(record.link);
        return;
      case 'user.sso-linked': {
        const user = this.users.get(record.userId);
        if (user === undefined) return;
        user.sso = record.sso;
        this.usersBySso.set(ssoKey(record.sso), user);
        return;
      }
    }
  }

  private placeConnection(connection: Connection): void {
    if (connection.teamId === undefined) {
      this.connectionsWithoutTeam.add(connection.id);
      return;
    }
    let ids = this.connectionsOfTeam.get(connection.teamId);
    if (ids === undefined) this.connectionsOfTeam.set(connection.teamId, (ids = new Set()));
    ids.add(connection.id);
  }

  private unplaceConnection(connection: Connection): void {
    if (connection.teamId === undefined) this.connectionsWithoutTeam.delete(connection.id);
    else this.connectionsOfTeam.get(connection.teamId)?.delete(connection.id);
  }

  private endSessionsOf(userId: string, keep: string | null): void {
    for (const session of [...this.sessions.values()]) if (session.userId === userId && session.tokenHash !== keep) this.sessions.delete(session.tokenHash);
  }

  private existingUser(userId: string): User {
    const user = this.users.get(userId);
    if (user === undefined) throw new DomainError('NOT_FOUND', 'user not found');
    return user;
  }

  /** Bounds sessions per user and drops expired ones; deterministic on replay (time from the record). */
  private dropOldestSessions(userId: string, nowMs: number): void {
    // Stryker disable next-line ArrayDeclaration: a placeholder compares equal to every session, stays first in the stable sort and its "drop" deletes nothing
    const own: Session[] = [];
    for (const session of this.sessions.values()) {
      if (session.expiresAtMs <= nowMs) this.sessions.delete(session.tokenHash);
      else if (session.userId === userId) own.push(session);
    }
    own.sort((a, b) => a.createdAtMs - b.createdAtMs);
    for (const session of own.slice(0, Math.max(0, own.length - SESSIONS_PER_USER_MAX))) {
      this.sessions.delete(session.tokenHash);
    }
  }

  toSnapshot(): AccountsSnapshot {
    return {
      users: [...this.users.values()],
      sessions: [...this.sessions.values()],
      connections: [...this.connections.values()],
      teams: this.teams.toSnapshot(),
      teamsEra: this.teamsEra,
      passwordLinks: this.passwordLinks.toSnapshot(),
      views: this.views.toSnapshot(),
    };
  }

  restore(data: AccountsSnapshot): void {
    for (const user of data.users) this.evolve({ t: 'user.created', user });
    for (const session of data.sessions) this.sessions.set(session.tokenHash, session);
    if (data.teams !== undefined) this.teams.restore(data.teams);
    this.teamsEra = data.teamsEra ?? false;
    this.passwordLinks.restore(data.passwordLinks ?? []);
    this.views.restore(data.views ?? []);
    for (const connection of data.connections) this.evolve({ t: 'connection.created', connection });
  }
}

function ssoKey(sso: SsoIdentityKey): string {
  return `${sso.issuer}\u0000${sso.subject}`;
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** `name`, or `name (2)`, `name (3)`... when taken (case-insensitive). */
function uniqueName(name: string, taken: ReadonlySet<string>): string {
  let candidate = name;
  for (let n = 2; taken.has(candidate.toLowerCase()); n++) candidate = `${name} (${n})`;
  return candidate;
}
