/**
 * `bun run cli ...`: users, teams and connections for headless installs. It opens the data
 * directory like the server does (lock, recover, log every change), so it refuses to
 * run while a server owns the directory rather than corrupt its log.
 */
import { parseArgs } from 'node:util';
import { DomainError } from '../../actors/domain-error.ts';
import { AccountService } from '../../actors/services/account-service.ts';
import { ConnectionService } from '../../actors/services/connection-service.ts';
import { TeamService } from '../../actors/services/team-service.ts';
import { UserService } from '../../actors/services/user-service.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { openEngine } from '../open-engine.ts';
import { runCommand, USAGE } from './commands.ts';
import { backupCommand, restoreCommand } from './backup-commands.ts';
import { verifyCommand } from './verify-command.ts';

const { positionals, values } = parseArgs({
  args: Bun.argv.slice(2),
  allowPositionals: true,
  strict: false,
  options: {
    json: { type: 'boolean' },
    admin: { type: 'boolean' },
    help: { type: 'boolean' },
    email: { type: 'string' },
    password: { type: 'string' },
    owner: { type: 'string' },
    team: { type: 'string' },
    role: { type: 'string' },
    name: { type: 'string' },
    id: { type: 'string' },
    url: { type: 'string' },
    'data-dir': { type: 'string' },
  },
});

if (values.help === true || positionals.length === 0) {
  console.log(USAGE);
  process.exit(positionals.length === 0 && values.help !== true ? 2 : 0);
}

const quiet = (): void => undefined;

try {
  const config = loadConfig();
  // backup, restore and verify do not open the data directory: backup asks the running service
  if (positionals[0] === 'backup' || positionals[0] === 'restore') {
    const run = positionals[0] === 'backup' ? backupCommand : restoreCommand;
    console.log(await run(config, positionals[1], values));
    process.exit(0);
  }
  if (positionals[0] === 'verify') {
    const verified = await verifyCommand(config, values);
    console.log(verified.text);
    process.exit(verified.exitCode);
  }
  const opened = await openEngine(config, { log: values.json === true ? quiet : (line) => console.error(line) });
  try {
    const accounts = new AccountService(opened.engine, config.sessionTtlMs, opened.sessionSecret);
    const connections = new ConnectionService(opened.engine);
    const teams = new TeamService(opened.engine);
    const users = new UserService(opened.engine, config.passwordLinkTtlMs);
    const publicBase = config.publicUrl ?? `http://localhost:${config.port}`;
    console.log(await runCommand({ engine: opened.engine, accounts, connections, teams, users, publicBase }, positionals, values));
  } finally {
    await opened.close();
  }
} catch (error) {
  const message = error instanceof DomainError || error instanceof ConfigError || error instanceof Error ? error.message : String(error);
  console.error(`error: ${message}`);
  process.exit(1);
}
