/**
 * The services about people, made once for the running service: sessions and passwords,
 * connections, teams, users, the audit log, and single sign-on when OIDC_ISSUER is set
 * (said once in the log).
 */
import type { Engine } from '../../actors/engine.ts';
import { AccountService } from '../../actors/services/account-service.ts';
import { AuditService } from '../../actors/services/audit-service.ts';
import { ConnectionService } from '../../actors/services/connection-service.ts';
import { SsoService } from '../../actors/services/sso-service.ts';
import { TeamService } from '../../actors/services/team-service.ts';
import { UserService } from '../../actors/services/user-service.ts';
import type { AppDeps } from '../app-deps.ts';
import type { Config } from '../config.ts';
import type { LogLine } from '../logging/log-line.ts';
import { OidcClient } from '../sso/oidc-client.ts';

export type PeopleServices = Pick<AppDeps, 'accounts' | 'connections' | 'teams' | 'users' | 'audit' | 'sso'>;

export function peopleServices(
  engine: Engine,
  config: Pick<Config, 'sessionTtlMs' | 'passwordLinkTtlMs' | 'oidc' | 'passwordSignIn'>,
  sessionSecret: string,
  log: LogLine,
): PeopleServices {
  return {
    accounts: new AccountService(engine, config.sessionTtlMs, sessionSecret),
    connections: new ConnectionService(engine),
    teams: new TeamService(engine),
    users: new UserService(engine, config.passwordLinkTtlMs),
    audit: new AuditService(engine),
    sso: singleSignOn(config, engine, sessionSecret, log),
  };
}

function singleSignOn(config: Pick<Config, 'oidc' | 'passwordSignIn'>, engine: Engine, sessionSecret: string, log: LogLine): AppDeps['sso'] {
  const { oidc } = config;
  if (oidc === null) return undefined;
  log(`single sign-on with ${oidc.issuer.href} (groups from the '${oidc.groupsClaim}' claim, ${oidc.groupMap.length} group mappings); password sign-in ${config.passwordSignIn ? 'on' : 'off'}`);
  return { client: new OidcClient(oidc, sessionSecret), service: new SsoService(engine), groupMap: oidc.groupMap };
}
