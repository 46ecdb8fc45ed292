/**
 * Teams and their members, for the routes and the CLI: list, create, rename, delete;
 * add a member by email, change a role, remove one. Who may do what is checked here as
 * well as by the route's rule (the CLI has no routes), through the caller's `Access`.
 * Also the one-time upgrade of data from before teams.
 */
import type { Access } from '../accounts/access.ts';
import type { Membership, Team } from '../accounts/account-records.ts';
import type { Role } from '../accounts/roles.ts';
import { DomainError } from '../domain-error.ts';
import type { Engine } from '../engine.ts';

export interface PublicTeam {
  id: string;
  name: string;
  createdAt: string;
  /** the signed-in user's role in it; null: not a member (the instance admin sees every team) */
  role: Role | null;
  members: number;
  connections: number;
}

export interface PublicMember {
  userId: string;
  email: string;
  role: Role;
  since: string;
  disabled: boolean;
}

const iso = (ms: number): string => new Date(ms).toISOString();

export class TeamService {
  constructor(private readonly engine: Engine) {}

  list(access: Access): PublicTeam[] {
    return access.visibleTeams().map(({ team, role }) => this.describe(team, role));
  }

  get(access: Access, teamId: string): PublicTeam {
    const team = access.manageTeam(teamId, 'viewer', 'see this team');
    return this.describe(team, access.teamRole(teamId));
  }

  async create(access: Access, name: string): Promise<PublicTeam> {
    access.requireInstanceAdmin('create teams');
    const record = this.engine.accounts.teams.decideCreate(name, this.engine.clock.nowMs());
    await this.engine.commit(record);
    if (record.t !== 'team.created') throw new Error('unreachable');
    access.note(record.team.id, null);
    return this.describe(record.team, null);
  }

  async rename(access: Access, teamId: string, name: string): Promise<PublicTeam> {
    access.manageTeam(teamId, 'admin', 'rename the team');
    await this.engine.commit(this.engine.accounts.teams.decideRename(teamId, name));
    return this.get(access, teamId);
  }

  async delete(access: Access, teamId: string): Promise<void> {
    access.requireInstanceAdmin('delete teams');
    access.note(teamId, null);
    await this.engine.commit(this.engine.accounts.teams.decideDelete(teamId, this.engine.accounts.connectionCountOf(teamId)));
  }

  members(access: Access, teamId: string): PublicMember[] {
    access.manageTeam(teamId, 'viewer', 'see its members');
    return this.engine.accounts.teams.membersOf(teamId).flatMap((membership) => this.describeMember(membership) ?? []);
  }

  /** Adds the user with `email` (who must exist: the instance admin creates users) or changes their role. */
  async addMember(access: Access, teamId: string, email: string, role: Role): Promise<PublicMember> {
    access.manageTeam(teamId, 'admin', 'add members');
    const user = this.engine.accounts.userByEmail(email);
    if (user === undefined) throw new DomainError('NOT_FOUND', `no user with email '${email.trim()}': the instance admin creates users`);
    return this.setMember(teamId, user.id, role);
  }

  async setRole(access: Access, teamId: string, userId: string, role: Role): Promise<PublicMember> {
    access.manageTeam(teamId, 'admin', "change members' roles");
    if (this.engine.accounts.teams.roleOf(teamId, userId) === null) throw new DomainError('NOT_FOUND', 'member not found');
    return this.setMember(teamId, userId, role);
  }

  async removeMember(access: Access, teamId: string, userId: string): Promise<void> {
    access.manageTeam(teamId, 'admin', 'remove members');
    await this.engine.commit(this.engine.accounts.teams.decideRemoveMember(teamId, userId));
  }

  /**
   * The first start of a version with teams over data from before them: each user's
   * connections become their own team's (accounts-actor.ts). Returns what was done, for
   * the log; nothing when there was nothing to upgrade.
   */
  async upgradeToTeams(): Promise<{ teams: number; connections: number } | null> {
    const records = this.engine.accounts.decideUpgradeToTeams(this.engine.clock.nowMs());
    if (records.length === 0) return null;
    await Promise.all(records.map((record) => this.engine.commit(record)));
    return {
      teams: records.filter((record) => record.t === 'team.created').length,
      connections: records.filter((record) => record.t === 'connection.moved').length,
    };
  }

  /** A team for the first admin of a new installation, so the quick start works as before teams. */
  async createFirstTeam(adminId: string, name: string): Promise<Team | null> {
    const { accounts } = this.engine;
    const admin = accounts.users.get(adminId);
    if (admin === undefined || accounts.teams.teams.size > 0) return null;
    const nowMs = this.engine.clock.nowMs();
    const record = accounts.teams.decideCreate(name, nowMs);
    if (record.t !== 'team.created') throw new Error('unreachable');
    await this.engine.commit(record);
    await this.engine.commit(accounts.teams.decideSetMember(record.team.id, admin, 'admin', nowMs));
    return record.team;
  }

  private async setMember(teamId: string, userId: string, role: Role): Promise<PublicMember> {
    const { accounts } = this.engine;
    const user = accounts.users.get(userId)!;
    await this.engine.commit(accounts.teams.decideSetMember(teamId, user, role, this.engine.clock.nowMs()));
    return this.describeMember(accounts.teams.membersOf(teamId).find((membership) => membership.userId === userId)!)!;
  }

  private describe(team: Team, role: Role | null): PublicTeam {
    const { accounts } = this.engine;
    return {
      id: team.id,
      name: team.name,
      createdAt: iso(team.createdAtMs),
      role,
      members: accounts.teams.membersOf(team.id).length,
      connections: accounts.connectionCountOf(team.id),
    };
  }

  private describeMember(membership: Membership): PublicMember | undefined {
    const user = this.engine.accounts.users.get(membership.userId);
    if (user === undefined) return undefined;
    return { userId: user.id, email: user.email, role: membership.role, since: iso(membership.sinceMs), disabled: user.disabled === true };
  }
}
