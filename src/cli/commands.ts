/**
 * The CLI's commands, run against an opened data directory. Each returns the text to
 * print (or JSON with --json); failures throw DomainErrors with the same messages as
 * the HTTP API. Whoever runs the CLI holds the data directory, so it acts as an admin of
 * every team (command-line-access.ts); `--owner` names the user recorded as a connection's creator.
 */
import { asInstanceAdmin, output, ownTeamOf, required, missing, roleOf, teamName, teamOf, userOf } from './command-helpers.ts';
import { runUserCommand } from './user-commands.ts';
import { ROLES } from '../../actors/accounts/roles.ts';
import { DomainError } from '../../actors/domain-error.ts';
import type { AccountService } from '../../actors/services/account-service.ts';
import type { ConnectionService } from '../../actors/services/connection-service.ts';
import type { TeamService } from '../../actors/services/team-service.ts';
import type { UserService } from '../../actors/services/user-service.ts';
import type { Engine } from '../../actors/engine.ts';
import { BACKUP_USAGE } from './backup-commands.ts';
import { VERIFY_USAGE } from './verify-command.ts';

export interface CliContext {
  engine: Engine;
  accounts: AccountService;
  connections: ConnectionService;
  teams: TeamService;
  users: UserService;
  /** where the dashboard is reached, for the links it prints: PUBLIC_URL, else http://localhost:<PORT> */
  publicBase: string;
}

export type Flags = Record<string, string | boolean | undefined>;

export const USAGE = `usage: bun run cli <command> [flags]

  user create --email EMAIL --password PASSWORD [--admin]
  user invite --email EMAIL [--team TEAM --role ROLE]     prints the link that sets the password
  user list [--json]
  user disable --email EMAIL          their sessions and live streams end at once
  user enable --email EMAIL
  user remove --email EMAIL
  user reset-password --email EMAIL   prints a single-use link that sets a new password
  user set-password --email EMAIL --password PASSWORD     every session of the user ends
  team create --name NAME [--json]
  team list [--json]
  team add-member --team TEAM --email EMAIL --role ${ROLES.join('|')}     adds, or changes the role
  team remove-member --team TEAM --email EMAIL
  connection create --name NAME (--team TEAM | --owner EMAIL) [--json]     prints the API key once;
      --owner alone: that user's first team where they are an admin (one of their own, named
      after their email, is made for a user in none)
  connection list [--team TEAM] [--json]
  connection delete --id CONNECTION_ID
${BACKUP_USAGE}
${VERIFY_USAGE}

TEAM is a team's name or id. The user, team and connection commands work on DATA_DIR
(default ./data) while the server is stopped; while it runs, use the HTTP API instead (the
data directory is locked by the server). backup works while the server runs (it asks the
server); verify reads only.`;

export async function runCommand(context: CliContext, words: string[], flags: Flags): Promise<string> {
  const command = words.join(' ');
  const managed = await runUserCommand(context, command, flags);
  if (managed !== null) return managed;
  switch (command) {
    case 'user create': {
      const user = await context.accounts.addUser(required(flags, 'email'), required(flags, 'password'), flags.admin === true);
      return output(flags, { user: { id: user.id, email: user.email, isAdmin: user.isAdmin } }, `created user ${user.email}${user.isAdmin ? ' (admin)' : ''}`);
    }
    case 'team create': {
      const team = await context.teams.create(asInstanceAdmin(context), required(flags, 'name'));
      return output(flags, { team }, `created team ${team.name} (${team.id})`);
    }
    case 'team list': {
      const teams = context.teams.list(asInstanceAdmin(context));
      const text = teams.map((team) => `${team.id}  ${team.name}  ${team.members} members  ${team.connections} connections`).join('\n');
      return output(flags, { data: teams }, text || 'no teams');
    }
    case 'team add-member': {
      const role = roleOf(flags);
      const team = teamOf(context, flags);
      const member = await context.teams.addMember(asInstanceAdmin(context), team.id, required(flags, 'email'), role);
      return output(flags, { member }, `${member.email} is ${member.role} of team ${team.name}`);
    }
    case 'team remove-member': {
      const team = teamOf(context, flags);
      const user = userOf(context, required(flags, 'email'));
      await context.teams.removeMember(asInstanceAdmin(context), team.id, user.id);
      return output(flags, { removed: user.email }, `removed ${user.email} from team ${team.name}`);
    }
    case 'connection create': {
      const creator = typeof flags.owner === 'string' ? userOf(context, flags.owner) : undefined;
      const teamId = typeof flags.team === 'string' ? teamOf(context, flags).id : creator === undefined ? missing('team') : await ownTeamOf(context, creator);
      const created = await context.connections.create(asInstanceAdmin(context, creator), required(flags, 'name'), teamId);
      return output(flags, created, `created connection ${created.connection.name} (${created.connection.id})\nAPI key (shown once): ${created.apiKey}`);
    }
    case 'connection list': {
      const teams = typeof flags.team === 'string' ? [teamOf(context, flags)] : undefined;
      const rows = context.connections
        .list(asInstanceAdmin(context))
        .filter((connection) => teams === undefined || teams.some((team) => team.id === connection.teamId))
        .map((connection) => ({ ...connection, team: teamName(context, connection.teamId) }));
      const text = rows.map((row) => `${row.id}  ${row.name}  ${row.keyPrefix}...  team ${row.team}  used today ${row.usage.used}`).join('\n');
      return output(flags, { data: rows }, text || 'no connections');
    }
    case 'connection delete': {
      await context.connections.delete(asInstanceAdmin(context), required(flags, 'id'));
      return output(flags, { deleted: flags.id }, `deleted connection ${String(flags.id)} and all its data`);
    }
    default:
      throw new DomainError('VALIDATION_ERROR', `unknown command '${command}'\n\n${USAGE}`);
  }
}

