/**
 * Managing users, for the instance admin (routes and CLI): the list with each user's state
 * and teams, creating one with a password or inviting one (a single-use link that sets
 * it), disabling, enabling and removing one (their sessions and live streams end at once),
 * and a password reset link. Links are shown once, by their token; only hashes are kept.
 */
import type { Access } from '../accounts/access.ts';
import type { PasswordLink, User } from '../accounts/account-records.ts';
import type { Role } from '../accounts/roles.ts';
import { hashPassword, newSessionToken, sha256Hex } from '../accounts/secrets.ts';
import type { Engine } from '../engine.ts';
import { checkEmail, checkNewPassword } from './account-service.ts';

export interface UserSummary {
  id: string;
  email: string;
  isAdmin: boolean;
  createdAt: string;
  /** `invited`: has no password yet (an invitation waits, or expired); `disabled`: may not sign in */
  status: 'active' | 'invited' | 'disabled';
  teams: Array<{ id: string; name: string; role: Role }>;
}

/** A link that sets a password, shown once: the token goes after `#token=` in the page's address. */
export interface IssuedLink {
  token: string;
  purpose: PasswordLink['purpose'];
  expiresAt: string;
}

export interface NewUser {
  email: string;
  /** absent: the user is invited, and sets one through the link */
  password?: string;
  /** a team to put them in at once, with `role` (viewer when absent) */
  teamId?: string;
  role?: Role;
}

const iso = (ms: number): string => new Date(ms).toISOString();

export class UserService {
  constructor(
    private readonly engine: Engine,
    private readonly passwordLinkTtlMs: number,
  ) {}

  list(access: Access): UserSummary[] {
    access.requireInstanceAdmin('list users');
    return [...this.engine.accounts.users.values()].sort((a, b) => a.createdAtMs - b.createdAtMs).map((user) => this.summary(user));
  }

  /** Creates the user (with a password, or invited with a link) and puts them in a team when one is named. */
  async create(access: Access, input: NewUser): Promise<{ user: UserSummary; link: IssuedLink | null }> {
    access.requireInstanceAdmin('create users');
    checkEmail(input.email);
    if (input.password !== undefined) checkNewPassword(input.password, 'password');
    if (input.teamId !== undefined) access.manageTeam(input.teamId, 'admin', 'add members');
    const { accounts } = this.engine;
    const passwordHash = input.password === undefined ? '' : await hashPassword(input.password);
    const record = accounts.decideCreateUser(input.email, passwordHash, false, this.engine.clock.nowMs());
    if (record.t !== 'user.created') throw new Error('unreachable');
    // the link is decided before anything is written, so a full set of links refuses the whole invitation
    const token = input.password === undefined ? newSessionToken() : null;
    const nowMs = this.engine.clock.nowMs();
    if (token !== null) accounts.passwordLinks.decideCreate({ tokenHash: sha256Hex(token), userId: record.user.id, purpose: 'invite', createdAtMs: nowMs, expiresAtMs: nowMs + this.passwordLinkTtlMs });
    await this.engine.commit(record);
    const user = record.user;
    access.note(input.teamId ?? null, null);
    const link = token === null ? null : await this.issue(user, 'invite', token);
    if (input.teamId !== undefined) await this.engine.commit(accounts.teams.decideSetMember(input.teamId, user, input.role ?? 'viewer', this.engine.clock.nowMs()));
    return { user: this.summary(user), link };
  }

  async setDisabled(access: Access, userId: string, disabled: boolean): Promise<UserSummary> {
    access.requireInstanceAdmin(disabled ? 'disable users' : 'enable users');
    await this.engine.commit(this.engine.accounts.decideDisable(userId, disabled, access.user.id));
    return this.summary(this.engine.accounts.users.get(userId)!);
  }

  async remove(access: Access, userId: string): Promise<void> {
    access.requireInstanceAdmin('remove users');
    await this.engine.commit(this.engine.accounts.decideRemoveUser(userId, access.user.id));
  }

  /** A single-use link that sets a new password (any earlier link of the user stops working). */
  async resetLink(access: Access, userId: string): Promise<IssuedLink> {
    access.requireInstanceAdmin('reset passwords');
    const user = this.engine.accounts.users.get(userId);
    return this.issue(user ?? ({ id: userId } as User), user?.passwordHash === '' ? 'invite' : 'reset', newSessionToken());
  }

  /** The command line sets a password straight (it holds the data directory); every session of the user ends. */
  async setPassword(userId: string, password: string): Promise<void> {
    checkNewPassword(password, 'password');
    const passwordHash = await hashPassword(password);
    await this.engine.commit(this.engine.accounts.decideSetPassword(userId, passwordHash, { keepSession: null, link: null }));
  }

  private async issue(user: User, purpose: PasswordLink['purpose'], token: string): Promise<IssuedLink> {
    const record = this.engine.accounts.decidePasswordLink(user.id, purpose, sha256Hex(token), this.passwordLinkTtlMs, this.engine.clock.nowMs());
    await this.engine.commit(record);
    if (record.t !== 'password-link.created') throw new Error('unreachable');
    return { token, purpose, expiresAt: iso(record.link.expiresAtMs) };
  }

  summary(user: User): UserSummary {
    const { teams } = this.engine.accounts;
    return {
      id: user.id,
      email: user.email,
      isAdmin: user.isAdmin,
      createdAt: iso(user.createdAtMs),
      status: user.disabled === true ? 'disabled' : user.passwordHash === '' ? 'invited' : 'active',
      teams: teams.membershipsOf(user.id).flatMap((membership) => {
        const team = teams.team(membership.teamId);
        return team === undefined ? [] : [{ id: team.id, name: team.name, role: membership.role }];
      }),
    };
  }
}
