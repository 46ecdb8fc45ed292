/**
 * The accounts at start: the upgrade of data from before teams (each user's connections
 * become their own team's, logged), then the first admin, made from
 * ADMIN_EMAIL/ADMIN_PASSWORD when no admin exists or with a one-time password printed
 * once, with a first team of which they are the admin. On a single node at start; in
 * cluster mode by whichever node writes the accounts partition, once it does
 * (service-mode.ts decides when).
 */
import type { AccountService } from '../../actors/services/account-service.ts';
import type { TeamService } from '../../actors/services/team-service.ts';
import type { Config } from '../config.ts';
import type { LogLine } from '../logging/log-line.ts';

/** The first team of a new installation. */
export const FIRST_TEAM_NAME = 'default';

export function firstAdminMaker(accounts: AccountService, teams: TeamService, config: Pick<Config, 'adminEmail' | 'adminPassword'>, log: LogLine): () => Promise<void> {
  return async () => {
    const upgraded = await teams.upgradeToTeams();
    if (upgraded !== null) {
      log(
        `upgraded to teams: each of ${upgraded.teams} users now has a team of their own (named after their email, as its admin), ` +
          `and the ${upgraded.connections} connections they created are that team's`,
        { teams: upgraded.teams, connections: upgraded.connections },
      );
    }
    const admin = await accounts.ensureAdmin(config.adminEmail, config.adminPassword);
    if (admin === null) return;
    log(
      admin.generatedPassword === null
        ? `created admin ${admin.email} from ADMIN_EMAIL/ADMIN_PASSWORD`
        : `created admin ${admin.email} with one-time password: ${admin.generatedPassword}  (shown once; set ADMIN_EMAIL and ADMIN_PASSWORD before the first start to choose it)`,
    );
    const team = await teams.createFirstTeam(admin.id, FIRST_TEAM_NAME);
    if (team !== null) log(`created team '${team.name}' with ${admin.email} as its admin`);
  };
}
