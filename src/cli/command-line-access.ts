/**
 * What the command line may do: whoever runs it holds the data directory, so it acts as an
 * admin of every team (the HTTP API gives nobody that: the instance admin reads a team's
 * data only as its member). `as` is the user recorded as the creator of what it makes.
 */
import { Access, type TeamGrant } from '../../actors/accounts/access.ts';
import type { User } from '../../actors/accounts/account-records.ts';
import type { Role } from '../../actors/accounts/roles.ts';
import type { Engine } from '../../actors/engine.ts';

const COMMAND_LINE: User = { id: 'command-line', email: 'the command line', passwordHash: '', isAdmin: true, createdAtMs: 0 };

export class CommandLineAccess extends Access {
  constructor(private readonly engine: Engine, as?: User) {
    super({ ...(as ?? COMMAND_LINE), isAdmin: true }, engine.accounts);
  }

  override teamRole(teamId: string): Role | null {
    return this.engine.accounts.teams.teams.has(teamId) ? 'admin' : null;
  }

  override teams(): TeamGrant[] {
    return [...this.engine.accounts.teams.teams.values()].map((team) => ({ team, role: 'admin' }));
  }
}
