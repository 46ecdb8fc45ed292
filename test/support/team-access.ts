/**
 * For tests that drive the services below the routes: a user's `Access`, after giving
 * them a team of which they are the admin when they have none (what a new installation
 * does for its first admin), so their connections have a team.
 */
import { Access } from '../../actors/accounts/access.ts';
import type { User } from '../../actors/accounts/account-records.ts';
import type { Engine } from '../../actors/engine.ts';
import { TeamService } from '../../actors/services/team-service.ts';

export async function withOwnTeam(engine: Engine, user: User, name = `team of ${user.email}`): Promise<Access> {
  if (!engine.accounts.teams.membershipsOf(user.id).some((membership) => membership.role === 'admin')) {
    const created = engine.accounts.teams.decideCreate(name, engine.clock.nowMs());
    await engine.commit(created);
    if (created.t !== 'team.created') throw new Error('expected a team record');
    await engine.commit(engine.accounts.teams.decideSetMember(created.team.id, user, 'admin', engine.clock.nowMs()));
  }
  return new Access(user, engine.accounts);
}

/** The user's `Access` as it stands (no team made). */
export function accessOf(engine: Engine, user: User): Access {
  return new Access(user, engine.accounts);
}

export { TeamService };
