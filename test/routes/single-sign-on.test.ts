/**
 * Single sign-on against a real OpenID Connect provider on loopback (oidc-provider, its
 * login and consent pages walked over HTTP): the redirect with state, nonce and PKCE, the
 * callback that signs in with the same session cookie as a password, a team and role from
 * the groups claim (followed at every sign-in), the no-access answer for someone whose
 * groups give no team; and every forged or replayed callback refused with the reason and
 * nothing signed in: a wrong or missing state, a replayed callback, a reused code, an ID
 * token for another client, expired, signed by another key, from another issuer, or a
 * discovery that names another issuer.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { exportJWK, generateKeyPair } from 'jose';
import { CLIENT_ID, CLIENT_SECRET, startOidcProvider, type TestProvider } from '../support/oidc-provider.ts';
import { startTamperingIssuer, type TamperingIssuer } from '../support/tampering-issuer.ts';
import { ADMIN, BASE, testApp, type TestApp } from '../support/test-app.ts';

const CALLBACK = `${BASE}/api/auth/oidc/callback`;
let provider: TestProvider;
let proxy: TamperingIssuer;

beforeAll(async () => {
  provider = await startOidcProvider([CALLBACK], {
    alice: { email: 'alice@example.com', groups: ['ops', 'staff'] },
    bob: { email: 'bob@example.com', groups: ['oncall'] },
    eve: { email: 'eve@example.com', groups: ['marketing'] },
    carol: { email: 'carol@example.com', emailVerified: false, groups: ['ops'] },
  });
  proxy = startTamperingIssuer(provider);
});
afterAll(async () => {
  await proxy.stop();
  await provider.stop();
});

async function appWithSso(issuer = provider.issuer) {
  const t = await testApp({
    sso: { OIDC_ISSUER: issuer, OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: CLIENT_SECRET, OIDC_GROUP_MAP: 'ops=production:operator,oncall=production:viewer,staff=production:viewer', OIDC_SCOPES: 'openid email groups', OIDC_ALLOW_HTTP: 'true' },
  });
  const admin = await t.sessionCookieOf(t.engine.accounts.userByEmail(ADMIN.email)!);
  await t.request('POST', '/api/teams', { body: { name: 'production' }, headers: { cookie: admin } });
  return t;
}

/** Starts a sign-in: the provider's address and the state cookie. */
async function start(t: TestApp) {
  const started = await t.request('GET', '/api/auth/oidc/start?next=/queues');
  expect(started.status).toBe(302);
  const cookie = started.headers.getSetCookie().find((header) => header.startsWith('sso_state='))!;
  return { location: started.headers.get('location')!, cookie: cookie.split(';')[0]!, setCookie: cookie };
}

async function callback(t: TestApp, url: URL, cookie: string | null) {
  const answer = await t.request('GET', url.pathname + url.search, { headers: cookie === null ? {} : { cookie } });
  const session = answer.headers.getSetCookie().find((header) => header.startsWith('session=') && !header.startsWith('session=;'));
  return { status: answer.status, location: answer.headers.get('location'), session: session?.split(';')[0] };
}

async function signedIn(t: TestApp, login: string) {
  const { location, cookie } = await start(t);
  return callback(t, await provider.signIn(location, login), cookie);
}

describe('single sign-on', () => {
  test('start: a redirect to the provider with state, nonce and an S256 PKCE challenge, and a short-lived state cookie for the callback only', async () => {
    const t = await appWithSso();
    const { location, setCookie } = await start(t);
    const url = new URL(location);
    expect(url.origin + url.pathname).toBe(`${provider.issuer}/auth`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ client_id: CLIENT_ID, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid email groups', code_challenge_method: 'S256' });
    for (const parameter of ['state', 'nonce', 'code_challenge']) expect(url.searchParams.get(parameter)!.length).toBeGreaterThan(20);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/Path=\/api\/auth\/oidc\/callback/);
    expect(setCookie).toMatch(/SameSite=Lax/);
    expect(setCookie).toMatch(/Max-Age=600/);
  });

  test('a person whose groups map to a team is made a user, put in the team with the strongest role of their groups, and signed in; their role follows their groups', async () => {
    const t = await appWithSso();
    const signed = await signedIn(t, 'alice');
    expect(signed.status).toBe(302);
    expect(signed.location).toBe('/queues');
    const me = await t.request('GET', '/api/auth/me', { headers: { cookie: signed.session! } });
    expect(me.json.user).toMatchObject({ email: 'alice@example.com', isAdmin: false });
    expect(me.json.teams.map((team: { name: string; role: string }) => [team.name, team.role])).toEqual([['production', 'operator']]);
    const [entry] = t.engine.audit.query({ limit: 1, nowMs: t.clock.nowMs() }).entries;
    expect(entry).toMatchObject({ action: 'auth.sso', email: 'alice@example.com', outcome: 'success', userId: me.json.user.id });

    provider.people.get('alice')!.groups = ['staff'];
    const again = await signedIn(t, 'alice');
    const after = await t.request('GET', '/api/auth/me', { headers: { cookie: again.session! } });
    expect(after.json.user.id).toBe(me.json.user.id);
    expect(after.json.teams.map((team: { role: string }) => team.role)).toEqual(['viewer']);
    provider.people.get('alice')!.groups = ['ops', 'staff'];
  }, 30_000);

  test('someone whose groups give no team gets the no-access page: no user, no session; the attempt is in the audit log', async () => {
    const t = await appWithSso();
    const signed = await signedIn(t, 'eve');
    expect(signed).toEqual({ status: 302, location: '/no-access', session: undefined });
    expect(t.engine.accounts.userByEmail('eve@example.com')).toBeUndefined();
    const [entry] = t.engine.audit.query({ limit: 1, nowMs: t.clock.nowMs() }).entries;
    expect(entry).toMatchObject({ action: 'auth.sso', email: 'eve@example.com', outcome: 'denied', error: 'NO_ACCESS: none of your groups gives a team here' });
  }, 30_000);

  test('an existing user of the same email is linked only when the provider says the email is verified', async () => {
    const t = await appWithSso();
    await t.userWithSession('carol@example.com');
    const refused = await signedIn(t, 'carol');
    expect(refused.session).toBeUndefined();
    expect(refused.location).toStartWith('/signin?sso=refused&reason=');
    expect(decodeURIComponent(refused.location!)).toContain('the identity provider does not say the email is verified');
    await t.userWithSession('bob@example.com');
    const linked = await signedIn(t, 'bob');
    expect(linked.location).toBe('/queues');
    expect(t.engine.accounts.userByEmail('bob@example.com')!.sso).toEqual({ issuer: provider.issuer, subject: 'bob' });
  }, 30_000);

  test('a wrong state, no state cookie, a replayed callback and a reused code are refused with the reason, and nothing is signed in', async () => {
    const t = await appWithSso();
    const first = await start(t);
    const back = await provider.signIn(first.location, 'alice');
    const forged = new URL(back);
    forged.searchParams.set('state', 'not-the-state');
    expect(await callback(t, forged, first.cookie)).toMatchObject({ status: 302, session: undefined, location: expect.stringMatching(/^\/signin\?sso=state&reason=/) });
    expect(await callback(t, back, null)).toMatchObject({ session: undefined, location: expect.stringMatching(/^\/signin\?sso=state/) });
    const honest = await callback(t, back, first.cookie);
    expect(honest.session).toBeDefined();
    const replayed = await callback(t, back, first.cookie);
    expect(replayed).toMatchObject({ session: undefined, location: expect.stringContaining('this%20sign-in%20was%20used%20already') });
    // the same code under a fresh state of this browser: the provider refuses a code used once
    const second = await start(t);
    const reused = new URL(back);
    reused.searchParams.set('state', new URL(second.location).searchParams.get('state')!);
    expect(await callback(t, reused, second.cookie)).toMatchObject({ session: undefined, location: expect.stringMatching(/^\/signin\?sso=token/) });
    // they name nobody the service knows: not in the audit log (an anonymous caller could fill it)
    expect(t.engine.audit.query({ limit: 10, nowMs: t.clock.nowMs(), action: 'auth.sso' }).entries.map((entry) => entry.outcome)).toEqual(['success']);
  }, 30_000);
});

describe('forged ID tokens (through a man in the middle that re-signs them)', () => {
  async function throughProxy(tampering: TamperingIssuer['tampering']) {
    proxy.tampering = {};
    const t = await appWithSso(proxy.issuer);
    const { location, cookie } = await start(t);
    proxy.tampering = tampering;
    const back = await provider.signIn(location, 'alice');
    // the provider names itself in the callback (RFC 9207); here the proxy plays the provider
    back.searchParams.set('iss', proxy.issuer);
    const answer = await callback(t, back, cookie);
    proxy.tampering = {};
    return answer;
  }

  test('untouched, the path through the proxy signs in (so the refusals below are the tampering\'s)', async () => {
    const answer = await throughProxy({});
    expect(answer.location).toBe('/queues');
    expect(answer.session).toBeDefined();
  }, 30_000);

  test('a token for another client, expired, signed by another key, from another issuer, or with another nonce: each refused, nothing signed in', async () => {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const otherKey = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256' };
    const cases: Array<[string, TamperingIssuer['tampering']]> = [
      ['another client', { claims: (claims) => ({ ...claims, aud: 'another-app', azp: 'another-app' }) }],
      ['expired', { claims: (claims) => ({ ...claims, iat: Math.floor(Date.now() / 1000) - 7_200, exp: Math.floor(Date.now() / 1000) - 3_600 }) }],
      ['badly signed', { key: otherKey }],
      ['another issuer', { claims: (claims) => ({ ...claims, iss: provider.issuer }) }],
      ['another nonce', { claims: (claims) => ({ ...claims, nonce: 'not-the-nonce' }) }],
    ];
    for (const [what, tampering] of cases) {
      const answer = await throughProxy(tampering);
      expect({ what, session: answer.session, location: answer.location?.split('&')[0] }).toEqual({ what, session: undefined, location: '/signin?sso=token' });
    }
  }, 60_000);

  test('a callback that names another issuer than the one the sign-in started with is refused', async () => {
    const t = await appWithSso(proxy.issuer);
    const { location, cookie } = await start(t);
    const back = await provider.signIn(location, 'alice'); // names the provider, not the configured issuer (the proxy)
    expect(await callback(t, back, cookie)).toMatchObject({ session: undefined, location: expect.stringMatching(/^\/signin\?sso=token/) });
  }, 30_000);

  test('a discovery document that names another issuer is refused: the sign-in does not start', async () => {
    proxy.tampering = { discoveredIssuer: () => provider.issuer };
    try {
      const t = await appWithSso(proxy.issuer);
      const refused = await t.request('GET', '/api/auth/oidc/start');
      expect(refused.status).toBe(503);
      expect(refused.json.error.message).toContain('cannot be reached or refused discovery');
    } finally {
      proxy.tampering = {};
    }
  });
});

describe('sign-in methods', () => {
  test('the sign-in page is told what there is; with password sign-in off, a password is refused', async () => {
    const t = await testApp({ passwordSignIn: false, sso: { OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: CLIENT_SECRET, OIDC_ALLOW_HTTP: 'true' } });
    expect((await t.request('GET', '/api/auth/methods')).json).toEqual({ password: false, sso: true });
    const refused = await t.request('POST', '/api/auth/login', { body: { email: ADMIN.email, password: ADMIN.password } });
    expect([refused.status, refused.json.error.message]).toEqual([403, 'password sign-in is turned off here: sign in with SSO']);
    const plain = await testApp({ withAdmin: false });
    expect((await plain.request('GET', '/api/auth/methods')).json).toEqual({ password: true, sso: false });
    expect((await plain.request('GET', '/api/auth/oidc/start')).status).toBe(404);
  });
});
