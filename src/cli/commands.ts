/**
 * The CLI's commands, run against an opened data directory. Each returns the text to
 * print (or JSON with --json); failures throw DomainErrors with the same messages as
 * the HTTP API.
 */
import type { User } from '../../actors/accounts/account-records.ts';
import { DomainError } from '../../actors/domain-error.ts';
import type { AccountService } from '../../actors/services/account-service.ts';
import type { ConnectionService } from '../../actors/services/connection-service.ts';
import type { Engine } from '../../actors/engine.ts';
import { BACKUP_USAGE } from './backup-commands.ts';
import { VERIFY_USAGE } from './verify-command.ts';

export interface CliContext {
  engine: Engine;
  accounts: AccountService;
  connections: ConnectionService;
}

export type Flags = Record<string, string | boolean | undefined>;

export const USAGE = `usage: bun run cli <command> [flags]

  user create --email EMAIL --password PASSWORD [--admin]
  connection create --owner EMAIL --name NAME [--json]     prints the API key once
  connection list [--owner EMAIL] [--json]
  connection delete --owner EMAIL --id CONNECTION_ID
${BACKUP_USAGE}
${VERIFY_USAGE}

The user and connection commands work on DATA_DIR (default ./data) while the server is
stopped; while it runs, use the HTTP API instead (the data directory is locked by the
server). backup works while the server runs (it asks the server); verify reads only.`;

export async function runCommand(context: CliContext, words: string[], flags: Flags): Promise<string> {
  const command = words.join(' ');
  switch (command) {
    case 'user create': {
      const user = await context.accounts.addUser(required(flags, 'email'), required(flags, 'password'), flags.admin === true);
      return output(flags, { user: { id: user.id, email: user.email, isAdmin: user.isAdmin } }, `created user ${user.email}${user.isAdmin ? ' (admin)' : ''}`);
    }
    case 'connection create': {
      const created = await context.connections.create(owner(context, flags), required(flags, 'name'));
      return output(flags, created, `created connection ${created.connection.name} (${created.connection.id})\nAPI key (shown once): ${created.apiKey}`);
    }
    case 'connection list': {
      const owners = typeof flags.owner === 'string' ? [owner(context, flags)] : [...context.engine.accounts.users.values()];
      const rows = owners.flatMap((user) => context.connections.list(user).map((connection) => ({ owner: user.email, ...connection })));
      const text = rows.map((row) => `${row.id}  ${row.name}  ${row.keyPrefix}...  owner ${row.owner}  used today ${row.usage.used}`).join('\n');
      return output(flags, { data: rows }, text || 'no connections');
    }
    case 'connection delete': {
      await context.connections.delete(owner(context, flags), required(flags, 'id'));
      return output(flags, { deleted: flags.id }, `deleted connection ${String(flags.id)} and all its data`);
    }
    default:
      throw new DomainError('VALIDATION_ERROR', `unknown command '${command}'\n\n${USAGE}`);
  }
}

function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (typeof value !== 'string' || value === '') throw new DomainError('VALIDATION_ERROR', `--${name} is required\n\n${USAGE}`);
  return value;
}

function owner(context: CliContext, flags: Flags): User {
  const email = required(flags, 'owner');
  const user = context.engine.accounts.userByEmail(email);
  if (user === undefined) throw new DomainError('NOT_FOUND', `no user with email '${email}'`);
  return user;
}

function output(flags: Flags, json: unknown, text: string): string {
  return flags.json === true ? JSON.stringify(json, null, 2) : text;
}
