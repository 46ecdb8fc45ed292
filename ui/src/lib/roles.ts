/**
 * What the signed-in user's role lets them do, for hiding and disabling controls with the
 * reason (the service checks every request itself; this only keeps the page honest).
 * Roles include the ones before them: viewer, operator, admin.
 */
import type { Role } from '../api/types.ts';
import { connections, teams, user } from '../session.ts';

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

export const includes = (role: Role | null | undefined, needed: Role): boolean => role != null && RANK[role] >= RANK[needed];

/** null when the user may; else why not, in a sentence (for a disabled control's title and a hint beside it). */
export function whyNotOnConnection(connectionId: string, needed: Role, doing: string): string | null {
  const connection = connections.value.find((each) => each.id === connectionId);
  if (connection === undefined) return `You cannot ${doing}: this connection is not one of your teams'.`;
  if (includes(connection.role, needed)) return null;
  const team = teams.value.find((each) => each.id === connection.teamId)?.name ?? 'its team';
  return `To ${doing} you need the ${needed} role in team ${team}; yours is ${connection.role}.`;
}

/** Whether the user has `needed` on some connection (a list that acts on several). */
export function roleSomewhere(needed: Role): boolean {
  return connections.value.some((connection) => includes(connection.role, needed));
}

/** The teams where the user is an admin (where they may create connections and manage members). */
export function adminTeams() {
  return teams.value.filter((team) => team.role === 'admin');
}

export const isInstanceAdmin = (): boolean => user.value?.isAdmin === true;

/** A team admin or the instance admin: they read (part of) the audit log. */
export const readsAudit = (): boolean => isInstanceAdmin() || adminTeams().length > 0;
