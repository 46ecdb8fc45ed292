/** What the CLI's commands share: reading flags, finding users and teams, acting as the command line, printing. */
import type { Team, User } from '../../actors/accounts/account-records.ts';
import { isRole, ROLES, type Role } from '../../actors/accounts/roles.ts';
import { DomainError } from '../../actors/domain-error.ts';
import { CommandLineAccess } from './command-line-access.ts';
import type { CliContext, Flags } from './commands.ts';
import { USAGE } from './commands.ts';

export function asInstanceAdmin(context: CliContext, as?: User): CommandLineAccess {
  return new CommandLineAccess(context.engine, as);
}

export function roleOf(flags: Flags): Role {
  if (!isRole(flags.role)) throw new DomainError('VALIDATION_ERROR', `--role must be one of ${ROLES.join(', ')}\n\n${USAGE}`);
  return flags.role;
}

export function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (typeof value !== 'string' || value === '') missing(name);
  return value as string;
}

export function missing(name: string): never {
  throw new DomainError('VALIDATION_ERROR', `--${name} is required\n\n${USAGE}`);
}

export function userOf(context: CliContext, email: string): User {
  const user = context.engine.accounts.userByEmail(email);
  if (user === undefined) throw new DomainError('NOT_FOUND', `no user with email '${email}'`);
  return user;
}

/** `--team` by name or id. */
export function teamOf(context: CliContext, flags: Flags): Team {
  const wanted = required(flags, 'team');
  const { teams } = context.engine.accounts;
  const team = teams.team(wanted) ?? teams.teamByName(wanted);
  if (team === undefined) throw new DomainError('NOT_FOUND', `no team named '${wanted}'`);
  return team;
}

/**
 * The user's first team where they are an admin; for a user in none (made with `user
 * create`, as a headless install does), a team of their own is made, named after their
 * email, as the upgrade from before teams gives every user.
 */
export async function ownTeamOf(context: CliContext, user: User): Promise<string> {
  const own = context.engine.accounts.teams.membershipsOf(user.id).find((membership) => membership.role === 'admin');
  if (own !== undefined) return own.teamId;
  const team = await context.teams.create(asInstanceAdmin(context), context.engine.accounts.teams.teamByName(user.email) === undefined ? user.email : `${user.email} (own)`);
  await context.teams.addMember(asInstanceAdmin(context), team.id, user.email, 'admin');
  return team.id;
}

export function teamName(context: CliContext, teamId: string | null): string {
  return teamId === null ? '(none yet)' : (context.engine.accounts.teams.team(teamId)?.name ?? teamId);
}

export function output(flags: Flags, json: unknown, text: string): string {
  return flags.json === true ? JSON.stringify(json, null, 2) : text;
}
