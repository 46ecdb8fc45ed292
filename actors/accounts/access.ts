/**
 * The one answer to "which connections may this user see, and with which role", for one
 * request: a user's role on a connection is their role in the team that owns it, and
 * nobody sees a team's data without being its member. The instance admin creates teams
 * and users and manages every team's members (`manageTeam`), so they can add themselves
 * to a team, but reads nothing of a team they are not in. Every read scopes by
 * `connections()` and every change asks `requireConnection` or `requireTeam` for the role
 * it needs. What the user cannot see at all is "not found" (its existence is not told);
 * what they see but their role does not allow is `FORBIDDEN`, naming the role needed.
 *
 * The teams and connections a request touched are kept in `subjects`, so that the
 * request's audit entry can say what it was about (and which team's admins may read it).
 */
import { DomainError } from '../domain-error.ts';
import type { Connection, Team, User } from './account-records.ts';
import type { AccountsActor } from './accounts-actor.ts';
import { roleIncludes, type Role } from './roles.ts';

export interface ConnectionGrant {
  connection: Connection;
  role: Role;
}

export interface TeamGrant {
  team: Team;
  role: Role;
}

export interface AccessSubject {
  teamId: string | null;
  connectionId: string | null;
}

export class Access {
  readonly subjects: AccessSubject[] = [];

  /**
   * `within`: the connections this request answers for (a cluster node answering a read for
   * some partitions only, src/http/read-scope.ts); absent, every one. It narrows what the
   * user reads, never what they may change.
   */
  constructor(
    readonly user: User,
    private readonly accounts: AccountsActor,
    private readonly within?: (connectionId: string) => boolean,
  ) {}

  get isInstanceAdmin(): boolean {
    return this.user.isAdmin;
  }

  /** The user's role in the team as its member; null when they are not one. */
  teamRole(teamId: string): Role | null {
    return this.accounts.teams.roleOf(teamId, this.user.id);
  }

  connectionRole(connectionId: string): Role | null {
    const connection = this.accounts.connections.get(connectionId);
    return connection === undefined ? null : this.roleOn(connection);
  }

  /** The user's teams, in the order they joined them. */
  teams(): TeamGrant[] {
    const grants: TeamGrant[] = [];
    for (const membership of this.accounts.teams.membershipsOf(this.user.id)) {
      const team = this.accounts.teams.team(membership.teamId);
      if (team !== undefined) grants.push({ team, role: membership.role });
    }
    return grants;
  }

  /** The teams the user may see as teams (their own; every team, for the instance admin), each with their role or null. */
  visibleTeams(): Array<{ team: Team; role: Role | null }> {
    const own: Array<{ team: Team; role: Role | null }> = this.teams();
    if (!this.user.isAdmin) return own;
    const listed = new Set(own.map((grant) => grant.team.id));
    return [...own, ...[...this.accounts.teams.teams.values()].filter((team) => !listed.has(team.id)).map((team) => ({ team, role: null }))];
  }

  /** The connections the user may read, oldest first within each team, narrowed to one by `connectionIdFilter` (and to the request's scope). */
  connections(connectionIdFilter?: string): ConnectionGrant[] {
    const within = this.within;
    const grants = this.grantedConnections(connectionIdFilter);
    return within === undefined ? grants : grants.filter((grant) => within(grant.connection.id));
  }

  private grantedConnections(connectionIdFilter: string | undefined): ConnectionGrant[] {
    if (connectionIdFilter !== undefined) {
      const connection = this.accounts.connections.get(connectionIdFilter);
      const role = connection === undefined ? null : this.roleOn(connection);
      return role === null ? [] : [{ connection: connection!, role }];
    }
    const grants: ConnectionGrant[] = [];
    for (const { team, role } of this.teams()) {
      for (const connection of this.accounts.connectionsOfTeamId(team.id)) grants.push({ connection, role });
    }
    for (const connection of this.accounts.legacyConnections()) {
      const role = this.roleOn(connection);
      if (role !== null) grants.push({ connection, role });
    }
    return grants;
  }

  /**
   * The connection, when the user's role on it includes `needed`; `doing` names the
   * action for the refusal ("revoke jobs"). Not found when the user cannot see it.
   */
  requireConnection(connectionId: string, needed: Role, doing: string): Connection {
    const connection = this.accounts.connections.get(connectionId);
    const role = connection === undefined ? null : this.roleOn(connection);
    if (role === null) throw new DomainError('NOT_FOUND', 'connection not found');
    this.note(connection!.teamId ?? null, connectionId);
    if (!roleIncludes(role, needed)) throw forbidden(doing, needed, role, this.teamName(connection!.teamId));
    return connection!;
  }

  /** The team, when the user is its member with a role that includes `needed`; not found when they are not its member. */
  requireTeam(teamId: string, needed: Role, doing: string): Team {
    const role = this.teamRole(teamId);
    if (role === null) throw new DomainError('NOT_FOUND', 'team not found');
    this.note(teamId, null);
    if (!roleIncludes(role, needed)) throw forbidden(doing, needed, role, this.teamName(teamId));
    return this.accounts.teams.team(teamId)!;
  }

  /**
   * The team, for managing it as a team (its name, its members): its members with a role
   * that includes `needed`, and the instance admin, who manages every team without seeing
   * its data.
   */
  manageTeam(teamId: string, needed: Role, doing: string): Team {
    const team = this.accounts.teams.team(teamId);
    if (this.user.isAdmin && team !== undefined) {
      this.note(teamId, null);
      return team;
    }
    return this.requireTeam(teamId, needed, doing);
  }

  /** Only the instance admin. */
  requireInstanceAdmin(doing: string): void {
    if (!this.user.isAdmin) throw new DomainError('FORBIDDEN', `only the instance admin can ${doing}`);
  }

  /** Records that this request is about a team or connection (for its audit entry), once each. */
  note(teamId: string | null, connectionId: string | null): void {
    if (!this.subjects.some((subject) => subject.teamId === teamId && subject.connectionId === connectionId)) this.subjects.push({ teamId, connectionId });
  }

  private roleOn(connection: Connection): Role | null {
    if (connection.teamId === undefined) return connection.ownerId === this.user.id ? 'admin' : null;
    return this.teamRole(connection.teamId);
  }

  private teamName(teamId: string | undefined): string {
    return teamId === undefined ? 'your own' : (this.accounts.teams.team(teamId)?.name ?? teamId);
  }
}

function forbidden(doing: string, needed: Role, role: Role, teamName: string): DomainError {
  return new DomainError('FORBIDDEN', `to ${doing} you need the ${needed} role in team '${teamName}'; yours is ${role}`);
}
