/**
 * Users, sessions and connections (with their key hashes). Decisions that need a slow
 * password hash take the hash as input, so `decide*` stays synchronous and pure.
 */
import { DomainError } from '../domain-error.ts';
import { newId } from '../ids.ts';
import type { AccountsRecord, Connection, Session, User } from './account-records.ts';
import { keyPrefixOf, sha256Hex } from './secrets.ts';

export const PASSWORD_CHARS_MIN = 12;
export const CONNECTIONS_PER_USER_MAX = 100;
export const SESSIONS_PER_USER_MAX = 50;

export class AccountsActor {
  readonly users = new Map<string, User>();
  private readonly usersByEmail = new Map<string, User>();
  private readonly sessions = new Map<string, Session>();
  readonly connections = new Map<string, Connection>();
  private readonly connectionsByKeyHash = new Map<string, Connection>();

  userByEmail(email: string): User | undefined {
    return this.usersByEmail.get(normalizeEmail(email));
  }

  /** The live session for a token, or undefined when unknown or expired. */
  sessionUser(tokenHash: string, nowMs: number): User | undefined {
    const session = this.sessions.get(tokenHash);
    if (session === undefined || session.expiresAtMs <= nowMs) return undefined;
    return this.users.get(session.userId);
  }

  connectionByKey(apiKey: string): Connection | undefined {
    return this.connectionsByKeyHash.get(sha256Hex(apiKey));
  }

  connectionsOf(userId: string): Connection[] {
    return [...this.connections.values()].filter((connection) => connection.ownerId === userId);
  }

  decideCreateUser(email: string, passwordHash: string, isAdmin: boolean, nowMs: number): AccountsRecord {
    if (this.userByEmail(email) !== undefined) {
      throw new DomainError('CONFLICT', `a user with email '${email}' already exists`);
    }
    return {
      t: 'user.created',
      user: { id: newId(), email: normalizeEmail(email), passwordHash, isAdmin, createdAtMs: nowMs },
    };
  }

  decideCreateSession(user: User, tokenHash: string, ttlMs: number, nowMs: number): AccountsRecord {
    return {
      t: 'session.created',
      session: { tokenHash, userId: user.id, createdAtMs: nowMs, expiresAtMs: nowMs + ttlMs },
    };
  }

  decideCreateConnection(ownerId: string, name: string, apiKey: string, nowMs: number): AccountsRecord {
    const owned = this.connectionsOf(ownerId);
    if (owned.some((connection) => connection.name === name)) {
      throw new DomainError('CONFLICT', `a connection named '${name}' already exists`);
    }
    if (owned.length >= CONNECTIONS_PER_USER_MAX) {
      throw new DomainError('CONFLICT', `a user can own at most ${CONNECTIONS_PER_USER_MAX} connections`);
    }
    return {
      t: 'connection.created',
      connection: {
        id: newId(),
        name,
        ownerId,
        keyHash: sha256Hex(apiKey),
        keyPrefix: keyPrefixOf(apiKey),
        createdAtMs: nowMs,
      },
    };
  }

  /** A connection another user owns is reported as not found: its existence is not leaked. */
  decideDeleteConnection(ownerId: string, connectionId: string): AccountsRecord {
    const connection = this.connections.get(connectionId);
    if (connection === undefined || connection.ownerId !== ownerId) {
      throw new DomainError('NOT_FOUND', 'connection not found');
    }
    return { t: 'connection.deleted', connectionId };
  }

  evolve(record: AccountsRecord): void {
    switch (record.t) {
      case 'user.created':
        this.users.set(record.user.id, record.user);
        this.usersByEmail.set(record.user.email, record.user);
        return;
      case 'session.created':
        this.sessions.set(record.session.tokenHash, record.session);
        this.dropOldestSessions(record.session.userId, record.session.createdAtMs);
        return;
      case 'session.deleted':
        this.sessions.delete(record.tokenHash);
        return;
      case 'connection.created':
        this.connections.set(record.connection.id, record.connection);
        this.connectionsByKeyHash.set(record.connection.keyHash, record.connection);
        return;
      case 'connection.deleted': {
        const connection = this.connections.get(record.connectionId);
        if (connection === undefined) return;
        this.connections.delete(connection.id);
        this.connectionsByKeyHash.delete(connection.keyHash);
        return;
      }
    }
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

  toSnapshot(): { users: User[]; sessions: Session[]; connections: Connection[] } {
    return { users: [...this.users.values()], sessions: [...this.sessions.values()], connections: [...this.connections.values()] };
  }

  restore(data: { users: User[]; sessions: Session[]; connections: Connection[] }): void {
    for (const user of data.users) this.evolve({ t: 'user.created', user });
    for (const session of data.sessions) this.sessions.set(session.tokenHash, session);
    for (const connection of data.connections) this.evolve({ t: 'connection.created', connection });
  }
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
