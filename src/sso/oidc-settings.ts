/**
 * Single sign-on settings from the environment (docs/configuration.md): the provider's
 * issuer URL, this service's client id and secret there, the scopes asked for, the claim
 * that lists the user's groups, and OIDC_GROUP_MAP, which gives each group a team and a
 * role (`ops=production:operator,oncall=production:viewer`). An http issuer is refused
 * unless OIDC_ALLOW_HTTP=true (a provider on loopback in tests). PASSWORD_SIGN_IN=false
 * turns password sign-in off once SSO is on.
 */
import { isRole, ROLES } from '../../actors/accounts/roles.ts';
import type { GroupGrant } from '../../actors/services/sso-service.ts';

export interface OidcSettings {
  issuer: URL;
  clientId: string;
  clientSecret: string;
  scopes: string;
  groupsClaim: string;
  groupMap: GroupGrant[];
  allowHttp: boolean;
}

export class OidcSettingsError extends Error {}

type Env = Record<string, string | undefined>;

const value = (env: Env, name: string): string | null => {
  const raw = env[name]?.trim();
  return raw === undefined || raw === '' ? null : raw;
};

export const OIDC_SCOPES_DEFAULT = 'openid email profile';
export const OIDC_GROUPS_CLAIM_DEFAULT = 'groups';

/** null when OIDC_ISSUER is unset (single sign-on off). */
export function oidcSettings(env: Env): OidcSettings | null {
  const issuerText = value(env, 'OIDC_ISSUER');
  const clientId = value(env, 'OIDC_CLIENT_ID');
  const clientSecret = value(env, 'OIDC_CLIENT_SECRET');
  const groupMapText = value(env, 'OIDC_GROUP_MAP');
  const scopes = value(env, 'OIDC_SCOPES') ?? OIDC_SCOPES_DEFAULT;
  const groupsClaim = value(env, 'OIDC_GROUPS_CLAIM') ?? OIDC_GROUPS_CLAIM_DEFAULT;
  const allowHttp = flag(env, 'OIDC_ALLOW_HTTP');
  if (issuerText === null) {
    if (clientId !== null || clientSecret !== null || groupMapText !== null) throw new OidcSettingsError('OIDC_CLIENT_ID, OIDC_CLIENT_SECRET and OIDC_GROUP_MAP need OIDC_ISSUER');
    return null;
  }
  let issuer: URL;
  try {
    issuer = new URL(issuerText);
  } catch {
    throw new OidcSettingsError(`OIDC_ISSUER must be the provider's issuer URL, got '${issuerText}'`);
  }
  if (issuer.protocol !== 'https:' && !(issuer.protocol === 'http:' && allowHttp)) {
    throw new OidcSettingsError(`OIDC_ISSUER must be https (got ${issuer.protocol}//...); OIDC_ALLOW_HTTP=true allows http, for a provider on loopback in tests only`);
  }
  if (clientId === null || clientSecret === null) throw new OidcSettingsError('OIDC_ISSUER needs OIDC_CLIENT_ID and OIDC_CLIENT_SECRET');
  if (!scopes.split(/\s+/).includes('openid')) throw new OidcSettingsError(`OIDC_SCOPES must include openid, got '${scopes}'`);
  return { issuer, clientId, clientSecret, scopes, groupsClaim, groupMap: parseGroupMap(groupMapText ?? ''), allowHttp };
}

/** `group=team:role,group=team:role`; a group may name several teams (several entries). */
export function parseGroupMap(text: string): GroupGrant[] {
  const grants: GroupGrant[] = [];
  for (const entry of text.split(',').map((part) => part.trim()).filter((part) => part !== '')) {
    const match = /^([^=]+)=(.+):([a-z]+)$/.exec(entry);
    const role = match?.[3];
    if (match === null || !isRole(role)) {
      throw new OidcSettingsError(`OIDC_GROUP_MAP entry '${entry}' must be group=team:role, the role one of ${ROLES.join(', ')}`);
    }
    grants.push({ group: match[1]!.trim(), team: match[2]!.trim(), role });
  }
  return grants;
}

function flag(env: Env, name: string): boolean {
  const raw = value(env, name)?.toLowerCase() ?? 'false';
  if (raw !== 'true' && raw !== 'false') throw new OidcSettingsError(`${name} must be true or false, got '${raw}'`);
  return raw === 'true';
}
