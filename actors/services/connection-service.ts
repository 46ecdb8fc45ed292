/** Connections: create in a team (the API key is shown once), list with usage, delete with all data. */
import type { Access } from '../accounts/access.ts';
import type { Connection } from '../accounts/account-records.ts';
import type { Role } from '../accounts/roles.ts';
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
  /** the team that owns it; null only for a connection from before teams, until the upgrade moves it */
  teamId: string | null;
  /** the signed-in user's role on it (their role in its team) */
  role: Role;
}

/** A connection the user may read, with their role on it: the unit reads are dispatched by. */
export interface ReadableConnection {
  actor: ConnectionActor;
  role: Role;
}

export class ConnectionService {
  constructor(private readonly engine: Engine) {}

  /** In `teamId`, or when absent the user's first team where they are an admin. */
  async create(access: Access, name: string, teamId: string | undefined): Promise<{ connection: PublicConnection; apiKey: string }> {
    const team = teamId ?? this.defaultTeamOf(access);
    access.requireTeam(team, 'admin', 'create connections');
    const apiKey = newApiKey();
    const record = this.engine.accounts.decideCreateConnection(access.user.id, name, apiKey, this.engine.clock.nowMs(), team);
    await this.engine.commit(record);
    if (record.t !== 'connection.created') throw new Error('unreachable');
    access.note(team, record.connection.id);
    // a shard's front keeps no connection: a new connection has used nothing yet, wherever it is kept
    const usage = this.engine.holds(record.connection.id) ? undefined : new DailyQuota(this.engine.limits.dailyEventLimit).usage(this.engine.clock.nowMs());
    return { connection: this.describe(record.connection, 'admin', usage), apiKey };
  }

  /** The connections the user may read that this engine keeps (all of them but on a shard), oldest first. */
  list(access: Access): PublicConnection[] {
    return access
      .connections()
      .filter(({ connection }) => this.engine.connection(connection.id) !== undefined)
      .sort((a, b) => a.connection.createdAtMs - b.connection.createdAtMs)
      .map(({ connection, role }) => this.describe(connection, role));
  }

  async delete(access: Access, connectionId: string): Promise<void> {
    access.requireConnection(connectionId, 'admin', 'delete connections');
    await this.engine.commit(this.engine.accounts.decideDeleteConnection(connectionId));
  }

  /**
   * The ids of the connections a user may read, narrowed by an optional `connectionId`
   * filter, in the order `Access.connections` gives; a connection of another team yields
   * none. Known from the accounts alone, so a shard's front answers it for connections kept
   * elsewhere.
   */
  readableConnectionIds(access: Access, connectionIdFilter: string | undefined): string[] {
    return access.connections(connectionIdFilter).map(({ connection }) => connection.id);
  }

  /**
   * The connections a user may read that this engine keeps (every one but on a shard),
   * narrowed by an optional `connectionId` filter, with the user's role on each; a
   * connection of another team yields none (an empty page).
   */
  readable(access: Access, connectionIdFilter: string | undefined): ReadableConnection[] {
    const readable: ReadableConnection[] = [];
    for (const { connection, role } of access.connections(connectionIdFilter)) {
      const actor = this.engine.connection(connection.id);
      if (actor !== undefined) readable.push({ actor, role });
    }
    return readable;
  }

  /** The actors of `readable`, for the reads that need no role beyond viewer. */
  readableActors(access: Access, connectionIdFilter: string | undefined): ConnectionActor[] {
    return this.readable(access, connectionIdFilter).map(({ actor }) => actor);
  }

  /**
   * The one check before a user's command reaches a connection's job system ("may
   * operate"): the operator role on the connection (its team's), else FORBIDDEN naming
   * `doing`; a connection the user cannot see is not found.
   */
  requireOperator(access: Access, connectionId: string, doing: string): void {
    access.requireConnection(connectionId, 'operator', doing);
  }

  private defaultTeamOf(access: Access): string {
    const admin = access.teams().find((grant) => grant.role === 'admin');
    if (admin === undefined) {
      throw new DomainError('FORBIDDEN', 'you are not an admin of any team: ask an admin of a team to create the connection, or the instance admin to make you one');
    }
    return admin.team.id;
  }

  private describe(connection: Connection, role: Role, usage?: Usage): PublicConnection {
    const actor = this.engine.connection(connection.id);
    if (actor === undefined && usage === undefined) throw new DomainError('NOT_FOUND', 'connection not found');
    return {
      id: connection.id,
      name: connection.name,
      keyPrefix: connection.keyPrefix,
      createdAt: new Date(connection.createdAtMs).toISOString(),
      usage: usage ?? actor!.quota.usage(this.engine.clock.nowMs()),
      teamId: connection.teamId ?? null,
      role,
    };
  }
}
