/** The CLI's user commands beyond `user create`: invite, list, disable, enable, remove, reset a password, set one. */
import type { CliContext, Flags } from './commands.ts';
import { asInstanceAdmin, output, required, roleOf, teamOf, userOf } from './command-helpers.ts';

/** The answer of a user command; null when `command` is none of these. */
export async function runUserCommand(context: CliContext, command: string, flags: Flags): Promise<string | null> {
  switch (command) {
    case 'user invite': {
      const role = flags.role === undefined ? undefined : roleOf(flags);
      const teamId = typeof flags.team === 'string' ? teamOf(context, flags).id : undefined;
      const { user, link } = await context.users.create(asInstanceAdmin(context), { email: required(flags, 'email'), teamId, role });
      const url = `${context.publicBase}/set-password#token=${link!.token}`;
      return output(flags, { user, invite: { url, expiresAt: link!.expiresAt } }, `invited ${user.email}; the link that sets their password (single use, until ${link!.expiresAt}):\n${url}`);
    }
    case 'user list': {
      const users = context.users.list(asInstanceAdmin(context));
      const text = users
        .map((user) => `${user.id}  ${user.email}${user.isAdmin ? ' (instance admin)' : ''}  ${user.status}  ${user.teams.map((team) => `${team.name}:${team.role}`).join(', ') || 'no team'}`)
        .join('\n');
      return output(flags, { data: users }, text);
    }
    case 'user disable':
    case 'user enable': {
      const disabled = command === 'user disable';
      const user = await context.users.setDisabled(asInstanceAdmin(context), userOf(context, required(flags, 'email')).id, disabled);
      return output(flags, { user }, `${user.email} is ${user.status}`);
    }
    case 'user remove': {
      const user = userOf(context, required(flags, 'email'));
      await context.users.remove(asInstanceAdmin(context), user.id);
      return output(flags, { removed: user.email }, `removed ${user.email}`);
    }
    case 'user reset-password': {
      const user = userOf(context, required(flags, 'email'));
      const link = await context.users.resetLink(asInstanceAdmin(context), user.id);
      const url = `${context.publicBase}/set-password#token=${link.token}`;
      return output(flags, { url, expiresAt: link.expiresAt }, `the link that sets a new password for ${user.email} (single use, until ${link.expiresAt}):\n${url}`);
    }
    case 'user set-password': {
      const user = userOf(context, required(flags, 'email'));
      await context.users.setPassword(user.id, required(flags, 'password'));
      return output(flags, { user: user.email }, `set the password of ${user.email}; their sessions ended`);
    }
    default:
      return null;
  }
}
