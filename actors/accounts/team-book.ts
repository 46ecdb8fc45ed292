/**
 * Teams and their members: who is in which team with which role. A team owns
 * connections (the accounts actor keeps which); a user can be in several teams. Every
 * collection a person can grow is bounded, and a team always keeps an admin (the instance
 * admin, an admin of every team, can always add one back: a user removed from the
 * instance takes their memberships with them whatever they were).
 */
import { DomainError, validationError } from '../domain-error.ts';
import { newId } from '../ids.ts';
import type { AccountsRecord, Membership, Team, User } from './account-records.ts';
import type { Role } from './roles.ts';

export const TEAMS_MAX = 1_000;
export const MEMBERS_PER_TEAM_MAX = 1_000;
export const TEAMS_PER_USER_MAX = 100;
export const TEAM_NAME_CHARS_MAX = 100;

export interface TeamBookSnapshot {
  teams: Team[];
  memberships: Membership[];
}

type TeamRecord = Extract<AccountsRecord, { t: 'team.created' | 'team.renamed' | 'team.deleted' | 'member.set' | 'member.removed' }>;

export class TeamBook {
  readonly teams = new Map<string, Team>();
  /** by name, lower case: names are unique whatever their case */
  private readonly byName = new Map<string, Team>();
  private readonly membersOfTeam = new Map<string, Map<string, Membership>>();
  private readonly teamsOfUser = new Map<string, Map<string, Membership>>();

  team(teamId: string): Team | undefined {
    return this.teams.get(teamId);
  }

  teamByName(name: string): Team | undefined {
    return this.byName.get(name.trim().toLowerCase());
  }

  /** The members of a team, in the order they joined. */
  membersOf(teamId: string): Membership[] {
    return [...(this.membersOfTeam.get(teamId)?.values() ?? [])];
  }

  membershipsOf(userId: string): Membership[] {
    return [...(this.teamsOfUser.get(userId)?.values() ?? [])];
  }

  roleOf(teamId: string, userId: string): Role | null {
    return this.teamsOfUser.get(userId)?.get(teamId)?.role ?? null;
  }

  decideCreate(name: string, nowMs: number): AccountsRecord {
    const trimmed = checkedName(name);
    if (this.teamByName(trimmed) !== undefined) throw new DomainError('CONFLICT', `a team named '${trimmed}' already exists`);
    if (this.teams.size >= TEAMS_MAX) throw new DomainError('CONFLICT', `there can be at most ${TEAMS_MAX} teams`);
    return { t: 'team.created', team: { id: newId(), name: trimmed, createdAtMs: nowMs } };
  }

  decideRename(teamId: string, name: string): AccountsRecord {
    this.existing(teamId);
    const trimmed = checkedName(name);
    const holder = this.teamByName(trimmed);
    if (holder !== undefined && holder.id !== teamId) throw new DomainError('CONFLICT', `a team named '${trimmed}' already exists`);
    return { t: 'team.renamed', teamId, name: trimmed };
  }

  /** `connections`: how many the team owns; a team that still has some is not deleted (its data would have no team). */
  decideDelete(teamId: string, connections: number): AccountsRecord {
    const team = this.existing(teamId);
    if (connections > 0) {
      throw new DomainError('CONFLICT', `team '${team.name}' still has ${connections} connection${connections === 1 ? '' : 's'}; delete them first`);
    }
    return { t: 'team.deleted', teamId };
  }

  /** Adds `user` with `role`, or changes their role. */
  decideSetMember(teamId: string, user: User, role: Role, nowMs: number): AccountsRecord {
    const team = this.existing(teamId);
    const current = this.membersOfTeam.get(teamId)?.get(user.id);
    if (current === undefined) {
      if ((this.membersOfTeam.get(teamId)?.size ?? 0) >= MEMBERS_PER_TEAM_MAX) {
        throw new DomainError('CONFLICT', `team '${team.name}' has ${MEMBERS_PER_TEAM_MAX} members, the most a team can have`);
      }
      if ((this.teamsOfUser.get(user.id)?.size ?? 0) >= TEAMS_PER_USER_MAX) {
        throw new DomainError('CONFLICT', `${user.email} is in ${TEAMS_PER_USER_MAX} teams, the most a user can be in`);
      }
    } else if (current.role === 'admin' && role !== 'admin') {
      this.refuseLosingLastAdmin(team, user.id);
    }
    return { t: 'member.set', membership: { teamId, userId: user.id, role, sinceMs: current?.sinceMs ?? nowMs } };
  }

  decideRemoveMember(teamId: string, userId: string): AccountsRecord {
    const team = this.existing(teamId);
    const current = this.membersOfTeam.get(teamId)?.get(userId);
    if (current === undefined) throw new DomainError('NOT_FOUND', 'member not found');
    if (current.role === 'admin') this.refuseLosingLastAdmin(team, userId);
    return { t: 'member.removed', teamId, userId };
  }

  evolve(record: TeamRecord): void {
    switch (record.t) {
      case 'team.created':
        this.teams.set(record.team.id, record.team);
        this.byName.set(record.team.name.toLowerCase(), record.team);
        return;
      case 'team.renamed': {
        const team = this.teams.get(record.teamId);
        if (team === undefined) return;
        this.byName.delete(team.name.toLowerCase());
        team.name = record.name;
        this.byName.set(team.name.toLowerCase(), team);
        return;
      }
      case 'team.deleted': {
        const team = this.teams.get(record.teamId);
        if (team === undefined) return;
        for (const membership of this.membersOf(team.id)) this.teamsOfUser.get(membership.userId)?.delete(team.id);
        this.membersOfTeam.delete(team.id);
        this.byName.delete(team.name.toLowerCase());
        this.teams.delete(team.id);
        return;
      }
      case 'member.set': {
        const { membership } = record;
        if (!this.teams.has(membership.teamId)) return;
        mapOf(this.membersOfTeam, membership.teamId).set(membership.userId, membership);
        mapOf(this.teamsOfUser, membership.userId).set(membership.teamId, membership);
        return;
      }
      case 'member.removed':
        this.membersOfTeam.get(record.teamId)?.delete(record.userId);
        this.teamsOfUser.get(record.userId)?.delete(record.teamId);
        return;
    }
  }

  /** A user removed from the instance leaves every team. */
  removeUser(userId: string): void {
    for (const teamId of this.teamsOfUser.get(userId)?.keys() ?? []) this.membersOfTeam.get(teamId)?.delete(userId);
    this.teamsOfUser.delete(userId);
  }

  toSnapshot(): TeamBookSnapshot {
    return { teams: [...this.teams.values()], memberships: [...this.teamsOfUser.values()].flatMap((memberships) => [...memberships.values()]) };
  }

  restore(data: TeamBookSnapshot): void {
    for (const team of data.teams) this.evolve({ t: 'team.created', team });
    for (const membership of data.memberships) this.evolve({ t: 'member.set', membership });
  }

  private existing(teamId: string): Team {
    const team = this.teams.get(teamId);
    if (team === undefined) throw new DomainError('NOT_FOUND', 'team not found');
    return team;
  }

  private refuseLosingLastAdmin(team: Team, userId: string): void {
    const otherAdmins = this.membersOf(team.id).filter((membership) => membership.role === 'admin' && membership.userId !== userId);
    if (otherAdmins.length === 0) throw new DomainError('CONFLICT', `team '${team.name}' would have no admin left; make another member admin first`);
  }
}

function checkedName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw validationError('name', 'must not be empty');
  if (trimmed.length > TEAM_NAME_CHARS_MAX) throw validationError('name', `must be at most ${TEAM_NAME_CHARS_MAX} characters`);
  return trimmed;
}

function mapOf<V>(maps: Map<string, Map<string, V>>, key: string): Map<string, V> {
  let map = maps.get(key);
  if (map === undefined) maps.set(key, (map = new Map()));
  return map;
}
