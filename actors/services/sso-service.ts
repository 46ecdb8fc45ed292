/**
 * Signing in through single sign-on, once the identity provider's answer is verified
 * (src/sso/oidc-client.ts): the user is found by the identity (issuer and subject), or an
 * existing user with the same email is linked to it when the provider says the email is
 * verified, or a user is made. Their roles in the teams the group map names follow their
 * groups at every sign-in (the strongest role of their matching groups; no matching group,
 * no membership); other teams are left as they are. Someone who ends up in no team gets
 * no access, and nothing is signed in; someone new with no matching group is not even made.
 */
import type { SsoIdentityKey, User } from '../accounts/account-records.ts';
import { strongerRole, type Role } from '../accounts/roles.ts';
import { DomainError } from '../domain-error.ts';
import type { Engine } from '../engine.ts';

export interface SsoIdentity extends SsoIdentityKey {
  email: string | null;
  emailVerified: boolean;
  groups: readonly string[];
}

/** One entry of OIDC_GROUP_MAP: members of `group` get `role` in team `team` (by name). */
export interface GroupGrant {
  group: string;
  team: string;
  role: Role;
}

export type SsoSignIn =
  | { kind: 'signed-in'; user: User; changes: string[] }
  | { kind: 'no-access'; email: string; reason: string };

export class SsoService {
  constructor(private readonly engine: Engine) {}

  async signIn(identity: SsoIdentity, groupMap: readonly GroupGrant[]): Promise<SsoSignIn> {
    const wanted = this.rolesFromGroups(identity.groups, groupMap);
    const found = await this.userOf(identity, wanted.size > 0);
    if (found === null) return { kind: 'no-access', email: identity.email ?? identity.subject, reason: 'none of your groups gives a team here' };
    if (found.disabled === true) throw new DomainError('FORBIDDEN', 'this account is disabled; ask the instance admin to enable it');
    const changes = await this.syncTeams(found, wanted, groupMap);
    const { accounts } = this.engine;
    if (accounts.teams.membershipsOf(found.id).length === 0 && !found.isAdmin) {
      return { kind: 'no-access', email: found.email, reason: 'none of your groups gives a team here, and you are in no other team' };
    }
    return { kind: 'signed-in', user: accounts.users.get(found.id)!, changes };
  }

  /** team id -> the strongest role the user's groups give in it; teams the map names that do not exist are left out. */
  private rolesFromGroups(groups: readonly string[], groupMap: readonly GroupGrant[]): Map<string, Role> {
    const wanted = new Map<string, Role>();
    for (const grant of groupMap) {
      const team = this.engine.accounts.teams.teamByName(grant.team);
      if (team === undefined || !groups.includes(grant.group)) continue;
      const had = wanted.get(team.id);
      wanted.set(team.id, had === undefined ? grant.role : strongerRole(had, grant.role));
    }
    return wanted;
  }

  /** The user of this identity, made or linked when needed; null for someone new whom no group lets in. */
  private async userOf(identity: SsoIdentity, letIn: boolean): Promise<User | null> {
    const { accounts } = this.engine;
    const known = accounts.userBySso(identity);
    if (known !== undefined) return known;
    if (identity.email === null) throw new DomainError('FORBIDDEN', 'the identity provider sent no email for you; ask its admin to release the email claim');
    const sameEmail = accounts.userByEmail(identity.email);
    if (sameEmail !== undefined) {
      if (!identity.emailVerified) {
        throw new DomainError('FORBIDDEN', `a user with email ${sameEmail.email} exists here, and the identity provider does not say the email is verified; ask the instance admin`);
      }
      await this.engine.commit(accounts.decideLinkSso(sameEmail.id, { issuer: identity.issuer, subject: identity.subject }));
      return accounts.users.get(sameEmail.id)!;
    }
    if (!letIn) return null;
    const record = accounts.decideCreateUser(identity.email, '', false, this.engine.clock.nowMs(), { issuer: identity.issuer, subject: identity.subject });
    await this.engine.commit(record);
    return accounts.userByEmail(identity.email)!;
  }

  /** Makes the user's roles in the mapped teams what their groups say; returns what changed, in words. */
  private async syncTeams(user: User, wanted: Map<string, Role>, groupMap: readonly GroupGrant[]): Promise<string[]> {
    const { teams } = this.engine.accounts;
    const changes: string[] = [];
    const mapped = new Set(groupMap.flatMap((grant) => teams.teamByName(grant.team)?.id ?? []));
    for (const teamId of mapped) {
      const has = teams.roleOf(teamId, user.id);
      const role = wanted.get(teamId) ?? null;
      if (has === role) continue;
      const name = teams.team(teamId)!.name;
      try {
        const record = role === null ? teams.decideRemoveMember(teamId, user.id) : teams.decideSetMember(teamId, user, role, this.engine.clock.nowMs());
        await this.engine.commit(record);
        changes.push(role === null ? `left ${name}` : `${name}: ${role}`);
      } catch (error) {
        // the team's last admin keeps the role, and a full team or user refuses one more: said, not fatal
        if (!(error instanceof DomainError) || error.code !== 'CONFLICT') throw error;
        changes.push(`${name}: unchanged (${error.message})`);
      }
    }
    return changes;
  }
}
