/** Connections: create (the API key is shown once), list with usage, delete with all data. */
import type { Connection, User } from '../accounts/account-records.ts';
import { newApiKey } from '../accounts/secrets.ts';
import { DomainError } from '../domain-error.ts';
import type { Engine } from '../engine.ts';
import { DailyQuota, type Usage } from '../connection/daily-quota.ts';
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
    // a shard's front keeps no connection: a new connection has used nothing yet, wherever it is kept
    const usage = this.engine.holds(record.connection.id) ? undefined : new DailyQuota(this.engine.limits.dailyEventLimit).usage(this.engine.clock.nowMs());
    return { connection: this.describe(record.connection, usage), apiKey };
  }

  /** The user's connections kept by this engine (all of them but on a shard), oldest first. */
  list(owner: User): PublicConnection[] {
    return this.engine.accounts
      .connectionsOf(owner.id)
      .filter((connection) => this.engine.connection(connection.id) !== undefined)
      .sort((a, b) => a.createdAtMs - b.createdAtMs)
      .map((connection) => this.describe(connection));
  }

  async delete(owner: User, connectionId: string): Promise<void> {
    await this.engine.commit(this.engine.accounts.decideDeleteConnection(owner.id, connectionId));
  }

  /**
   * The ids of the connections a user may read, narrowed by an optional `connectionId`
   * filter, in the accounts' order; a connection of another user yields none. Known from the
   * accounts alone, so a shard's front answers it for connections kept elsewhere.
   */
  readableConnectionIds(owner: User, connectionIdFilter: string | undefined): string[] {
    const ids: string[] = [];
    for (const connection of this.engine.accounts.connectionsOf(owner.id)) {
      if (connectionIdFilter === undefined || connection.id === connectionIdFilter) ids.push(connection.id);
    }
    return ids;
  }

  /**
   * The actors of the connections a user may read that this engine keeps (every one but on
   * a shard), narrowed by an optional `connectionId` filter; a connection of another user
   * yields none (an empty page).
   */
  readableActors(owner: User, connectionIdFilter: string | undefined): ConnectionActor[] {
    const actors: ConnectionActor[] = [];
    for (const id of this.readableConnectionIds(owner, connectionIdFilter)) {
      const actor = this.engine.connection(id);
      if (actor !== undefined) actors.push(actor);
    }
    return actors;
  }

  private describe(connection: Connection, usage?: Usage): PublicConnection {
    const actor = this.engine.connection(connection.id);
    if (actor === undefined && usage === undefined) throw new DomainError('NOT_FOUND', 'connection not found');
    return {
      id: connection.id,
      name: connection.name,
      keyPrefix: connection.keyPrefix,
      createdAt: new Date(connection.createdAtMs).toISOString(),
      usage: usage ?? actor!.quota.usage(this.engine.clock.nowMs()),
    };
  }
}
