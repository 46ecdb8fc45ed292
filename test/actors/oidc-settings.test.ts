/** The single sign-on settings: what is refused at start, by name, and what the group map means. */
import { describe, expect, test } from 'bun:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { parseGroupMap } from '../../src/sso/oidc-settings.ts';

const SSO = { OIDC_ISSUER: 'https://login.example.com/realms/main', OIDC_CLIENT_ID: 'jobwatch', OIDC_CLIENT_SECRET: 'the secret' };

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('single sign-on settings', () => {
  test('off unless OIDC_ISSUER is set; on, with the documented defaults', () => {
    expect(loadConfig({}).oidc).toBeNull();
    expect(loadConfig(SSO).oidc).toMatchObject({ clientId: 'jobwatch', scopes: 'openid email profile', groupsClaim: 'groups', groupMap: [], allowHttp: false });
    expect(loadConfig(SSO).oidc!.issuer.href).toBe('https://login.example.com/realms/main');
  });

  test('an http issuer only with OIDC_ALLOW_HTTP=true; the client id and secret are required; the scopes must include openid', () => {
    expect(refusal({ ...SSO, OIDC_ISSUER: 'http://127.0.0.1:9000' })).toContain('OIDC_ISSUER must be https');
    expect(loadConfig({ ...SSO, OIDC_ISSUER: 'http://127.0.0.1:9000', OIDC_ALLOW_HTTP: 'true' }).oidc!.allowHttp).toBe(true);
    expect(refusal({ OIDC_ISSUER: SSO.OIDC_ISSUER })).toBe('OIDC_ISSUER needs OIDC_CLIENT_ID and OIDC_CLIENT_SECRET');
    expect(refusal({ OIDC_CLIENT_ID: 'x' })).toBe('OIDC_CLIENT_ID, OIDC_CLIENT_SECRET and OIDC_GROUP_MAP need OIDC_ISSUER');
    expect(refusal({ ...SSO, OIDC_SCOPES: 'email groups' })).toContain('OIDC_SCOPES must include openid');
    expect(refusal({ ...SSO, OIDC_ISSUER: 'not a url' })).toContain("OIDC_ISSUER must be the provider's issuer URL");
  });

  test('PASSWORD_SIGN_IN=false needs single sign-on: nobody could sign in otherwise', () => {
    expect(refusal({ PASSWORD_SIGN_IN: 'false' })).toContain('PASSWORD_SIGN_IN=false needs single sign-on');
    expect(loadConfig({ ...SSO, PASSWORD_SIGN_IN: 'false' }).passwordSignIn).toBe(false);
  });

  test('the group map: group=team:role entries; a group may give several teams; a bad entry is refused naming it', () => {
    expect(parseGroupMap('ops=production:operator, oncall=production:viewer,ops=staging:admin')).toEqual([
      { group: 'ops', team: 'production', role: 'operator' },
      { group: 'oncall', team: 'production', role: 'viewer' },
      { group: 'ops', team: 'staging', role: 'admin' },
    ]);
    expect(parseGroupMap('team lead=Team: with colon:admin')).toEqual([{ group: 'team lead', team: 'Team: with colon', role: 'admin' }]);
    expect(refusal({ ...SSO, OIDC_GROUP_MAP: 'ops=production:owner' })).toBe("OIDC_GROUP_MAP entry 'ops=production:owner' must be group=team:role, the role one of viewer, operator, admin");
    expect(refusal({ ...SSO, OIDC_GROUP_MAP: 'ops' })).toContain("OIDC_GROUP_MAP entry 'ops'");
  });
});
