/** Connections: create (the API key is shown once), list with usage, delete with all data. */
import type { Connection, User } from '../accounts/account-records.ts';
import { newApiKey } from '../accounts/secrets.ts';
import { DomainError } from '../domain-error.ts';
import type { Engine } from '../engine.ts';
import type { Usage } from '../connection/daily-quota.ts';
import type { ConnectionActor } from '../connection/connection-actor.ts';

export interface PublicConnection {
  id: string;
  name: string;
  keyPrefix: string;
  createdAt: string;
  usage: Usage;
}

export class ConnectionService {
  constructor(private readonly engine: Engine) {}

  async create(owner: User, name: string): Promise<{ connection: PublicConnection; apiKey: string }> {
    const apiKey = newApiKey();
    const record = this.engine.accounts.decideCreateConnection(owner.id, name, apiKey, this.engine.clock.nowMs());
    await this.engine.commit(record);
    if (record.t !== 'connection.created') throw new Error('unreachable');
    return { connection: this.describe(record.connection), apiKey };
  }

  list(owner: User): PublicConnection[] {
    return this.engine.accounts
      .connectionsOf(owner.id)
      .sort((a, b) => a.createdAtMs - b.createdAtMs)
      .map((connection) => this.describe(connection));
  }

  async delete(owner: User, connectionId: string): Promise<void> {
    await this.engine.commit(this.engine.accounts.decideDeleteConnection(owner.id, connectionId));
  }

  /**
   * The actors of the connections a user may read, narrowed by an optional
   * `connectionId` filter; a connection of another user yields none (an empty page).
   */
  readableActors(owner: User, connectionIdFilter: string | undefined): ConnectionActor[] {
    const actors: ConnectionActor[] = [];
    for (const connection of this.engine.accounts.connectionsOf(owner.id)) {
      if (connectionIdFilter !== undefined && connection.id !== connectionIdFilter) continue;
      const actor = this.engine.connection(connection.id);
      if (actor !== undefined) actors.push(actor);
    }
    return actors;
  }

  /**
   * The one check before a user's command reaches a connection's job system ("may
   * operate"): the connection is one the user may read and their role lets them act on it.
   * Today the owner of a connection is the only one who reads it and may act on it; a role
   * that reads but may not act would refuse here with FORBIDDEN naming `doing`.
   */
  requireOperator(user: User, connectionId: string, doing: string): void {
    if (this.readableActors(user, connectionId).length === 0) throw new DomainError('NOT_FOUND', `connection not found (to ${doing})`);
  }

  private describe(connection: Connection): PublicConnection {
    const actor = this.engine.connection(connection.id);
    if (actor === undefined) throw new DomainError('NOT_FOUND', 'connection not found');
    return {
      id: connection.id,
      name: connection.name,
      keyPrefix: connection.keyPrefix,
      createdAt: new Date(connection.createdAtMs).toISOString(),
      usage: actor.quota.usage(this.engine.clock.nowMs()),
    };
  }
}
