/**
 * A member's role in a team, each including the ones before it: a `viewer` reads and
 * watches the live stream; an `operator` also revokes and retries jobs (and uses the
 * job-system controls); an `admin` also manages the team's connections and their keys,
 * alert rules and channels, and its members. docs/security.md has the whole matrix.
 */
export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

/** Whether `role` includes everything `needed` may do. */
export function roleIncludes(role: Role, needed: Role): boolean {
  return RANK[role] >= RANK[needed];
}

/** The greater of two roles (a user given a team by two SSO groups gets the stronger). */
export function strongerRole(a: Role, b: Role): Role {
  return RANK[a] >= RANK[b] ? a : b;
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}
