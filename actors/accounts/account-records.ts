/** Log records that change accounts: users, sessions, teams and their members, connections and their keys. */
import type { Role } from './roles.ts';

export interface User {
  id: string;
  email: string;
  /** '' for a user who has no password (invited and not yet signed up, or signing in through SSO only) */
  passwordHash: string;
  /** the instance admin: creates teams and users, and is an admin of every team */
  isAdmin: boolean;
  createdAtMs: number;
  /** set while the user may not sign in (absent in records written before users could be disabled) */
  disabled?: boolean;
  /** the single sign-on identity this user signs in as (absent: none yet) */
  sso?: SsoIdentityKey;
}

/** Who a user is at the identity provider: its issuer and the subject it names them by. */
export interface SsoIdentityKey {
  issuer: string;
  subject: string;
}

export interface Session {
  tokenHash: string;
  userId: string;
  createdAtMs: number;
  expiresAtMs: number;
}

/**
 * A single-use link that sets a user's password: an invitation (the user has none yet)
 * or a reset by the instance admin. Only its token's hash is kept; it ends when used,
 * when a newer link for the same user is made, or at `expiresAtMs`.
 */
export interface PasswordLink {
  tokenHash: string;
  userId: string;
  purpose: 'invite' | 'reset';
  createdAtMs: number;
  expiresAtMs: number;
}

export interface Team {
  id: string;
  name: string;
  createdAtMs: number;
}

export interface Membership {
  teamId: string;
  userId: string;
  role: Role;
  /** when the user joined the team (a role change keeps it) */
  sinceMs: number;
}

/** A saved view of the jobs list (saved-views.ts). */
export interface SavedView {
  id: string;
  teamId: string;
  name: string;
  /** the jobs list's query parameters (filters and sort), as the address of the jobs page carries them */
  params: Record<string, string>;
  /** who saved it first, and who changed it last */
  createdBy: string;
  updatedBy: string;
  createdAtMs: number;
  updatedAtMs: number;
}

export interface Connection {
  id: string;
  name: string;
  /** the user who created it */
  ownerId: string;
  /**
   * The team it belongs to. Absent only in records written before teams existed: such a
   * connection is its owner's until the first start of a version with teams moves it into
   * the owner's own team (`connection.moved`).
   */
  teamId?: string;
  keyHash: string;
  keyPrefix: string;
  createdAtMs: number;
}

export type AccountsRecord =
  | { t: 'user.created'; user: User }
  | { t: 'session.created'; session: Session }
  | { t: 'session.deleted'; tokenHash: string }
  /** a disabled user's sessions end at once, and they may not sign in until enabled */
  | { t: 'user.disabled'; userId: string; disabled: boolean }
  /** the user, their sessions, memberships and password link go */
  | { t: 'user.removed'; userId: string }
  /**
   * A new password: every session of the user ends but `keepSession` (the one that changed
   * it, or none), and the link it was set with (`link`, a token hash) is used up.
   */
  | { t: 'user.password'; userId: string; passwordHash: string; keepSession: string | null; link: string | null }
  | { t: 'password-link.created'; link: PasswordLink }
  /** an existing user signs in through single sign-on from now on too */
  | { t: 'user.sso-linked'; userId: string; sso: SsoIdentityKey }
  | { t: 'team.created'; team: Team }
  | { t: 'team.renamed'; teamId: string; name: string }
  /** only a team without connections is deleted; its memberships go with it */
  | { t: 'team.deleted'; teamId: string }
  /** adds a member or changes a member's role */
  | { t: 'member.set'; membership: Membership }
  | { t: 'member.removed'; teamId: string; userId: string }
  | { t: 'connection.created'; connection: Connection }
  /** a connection changes team (the upgrade to teams moves each user's connections into their own team) */
  | { t: 'connection.moved'; connectionId: string; teamId: string }
  | { t: 'connection.deleted'; connectionId: string }
  /** a view created, or changed (its name, its filters) */
  | { t: 'view.saved'; view: SavedView }
  | { t: 'view.deleted'; viewId: string };
