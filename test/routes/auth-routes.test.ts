/**
 * What the login, logout, me and users routes add to AccountService: the session cookie
 * and its attributes, status codes, bodies and their validation. Users log in with a cheap
 * argon2id hash (committed directly) and the apps have no ADMIN, so only creating a user
 * through POST /api/users costs a real hash.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { testApp, type TestApp } from '../support/test-app.ts';
import { withOwnTeam } from '../support/team-access.ts';

const PASSWORD = 'correct horse battery';
const SESSION_TTL_SECONDS = 7 * 86_400; // testApp's session time to live
let cheapHash = '';
let userCount = 0;
beforeAll(async () => {
  cheapHash = await Bun.password.hash(PASSWORD, { algorithm: 'argon2id', memoryCost: 8, timeCost: 1 });
});

/** A user who can log in with PASSWORD. */
async function addUser(t: TestApp, isAdmin = false): Promise<string> {
  const email = `user${++userCount}@example.com`;
  await t.engine.commit({ t: 'user.created', user: { id: `u${userCount}`, email, passwordHash: cheapHash, isAdmin, createdAtMs: t.clock.nowMs() } });
  return email;
}

function login(t: TestApp, email: string, options: { base?: string; password?: string } = {}) {
  const base = options.base ?? 'http://localhost:3000';
  return t.app.handle(
    new Request(base + '/api/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ email, password: options.password ?? PASSWORD }),
    }),
  );
}

async function cookieOf(t: TestApp, email: string): Promise<string> {
  const response = await login(t, email);
  expect(response.status).toBe(200);
  return response.headers.get('set-cookie')!.split(';')[0]!;
}

let shared: TestApp;
beforeAll(async () => {
  shared = await testApp({ withAdmin: false });
});

describe('POST /api/auth/login', () => {
  test('sets the session cookie: HttpOnly, SameSite=Lax, path /, for the session time to live; the body is the public user', async () => {
    const email = await addUser(shared);
    const response = await login(shared, email);
    expect(response.status).toBe(200);
    const [session, device] = response.headers.getSetCookie();
    expect(device).toStartWith('device='); // device-cookie.test.ts
    const parts = session!.split(/;\s*/);
    expect(parts[0]).toMatch(/^session=[A-Za-z0-9_-]{43}$/);
    expect(parts.slice(1).sort()).toEqual(['HttpOnly', `Max-Age=${SESSION_TTL_SECONDS}`, 'Path=/', 'SameSite=Lax']);
    expect(await response.json()).toEqual({ user: { id: `u${userCount}`, email, isAdmin: false, createdAt: new Date(shared.clock.nowMs()).toISOString() } });
  });

  test('COOKIE_SECURE=auto marks the cookie Secure exactly when the request came over https', async () => {
    const email = await addUser(shared);
    const secure = (await login(shared, email, { base: 'https://localhost:3000' })).headers.getSetCookie();
    expect(secure).toHaveLength(2); // the session and the device cookie, both Secure
    for (const cookie of secure) expect(cookie).toContain('; Secure');
    expect((await login(shared, email)).headers.get('set-cookie')).not.toContain('Secure');
  });

  test('COOKIE_SECURE=true always marks it Secure, false never', async () => {
    const always = await testApp({ cookieSecure: 'true', withAdmin: false });
    expect((await login(always, await addUser(always))).headers.get('set-cookie')).toContain('; Secure');
    const never = await testApp({ cookieSecure: 'false', withAdmin: false });
    expect((await login(never, await addUser(never), { base: 'https://localhost:3000' })).headers.get('set-cookie')).not.toContain('Secure');
  });

  test('a wrong password is 401 and sets no cookie', async () => {
    const email = await addUser(shared);
    const response = await login(shared, email, { password: 'wrong horse battery' });
    expect(response.status).toBe(401);
    expect(response.headers.get('set-cookie')).toBeNull();
  });

  test('the body needs an email of 1 to 320 characters and a password of 1 to 1024', async () => {
    const cases: Array<[Record<string, unknown>, Record<string, string[]>]> = [
      [{ email: 'a@example.com' }, { password: ['expected required property', 'expected string'] }],
      [{ password: PASSWORD }, { email: ['expected required property', 'expected string'] }],
      [{ email: '', password: PASSWORD }, { email: ['expected string length greater or equal to 1'] }],
      [{ email: 'a'.repeat(321), password: PASSWORD }, { email: ['expected string length less or equal to 320'] }],
      [{ email: 'a@example.com', password: '' }, { password: ['expected string length greater or equal to 1'] }],
      [{ email: 'a@example.com', password: 'x'.repeat(1025) }, { password: ['expected string length less or equal to 1024'] }],
    ];
    for (const [body, details] of cases) {
      const response = await shared.request('POST', '/api/auth/login', { body });
      expect(response.status).toBe(400);
      expect(response.json.error.code).toBe('VALIDATION_ERROR');
      expect(response.json.error.details).toEqual(details);
    }
  });
});

describe('POST /api/auth/logout and GET /api/auth/me', () => {
  test('me shows the user, their teams with their role in each, and their connections', async () => {
    const email = await addUser(shared);
    const cookie = await cookieOf(shared, email);
    const none = await shared.request('GET', '/api/auth/me', { headers: { cookie } });
    expect(none.json).toMatchObject({ teams: [], connections: [] });
    const user = shared.engine.accounts.userByEmail(email)!;
    await withOwnTeam(shared.engine, user, `team ${userCount}`);
    await shared.createConnection(cookie, 'prod');
    const me = await shared.request('GET', '/api/auth/me', { headers: { cookie } });
    expect(me.status).toBe(200);
    expect(me.json.user).toEqual({ id: `u${userCount}`, email: `user${userCount}@example.com`, isAdmin: false, createdAt: expect.any(String) });
    expect(me.json.teams).toEqual([{ id: expect.any(String), name: `team ${userCount}`, role: 'admin', members: 1, connections: 1, createdAt: expect.any(String) }]);
    expect(me.json.connections.map((connection: { name: string; role: string; teamId: string }) => [connection.name, connection.role, connection.teamId])).toEqual([['prod', 'admin', me.json.teams[0].id]]);
  });

  test('logout is 204, clears the cookie and ends the session; without a session it is 204 too', async () => {
    const cookie = await cookieOf(shared, await addUser(shared));
    const out = await shared.request('POST', '/api/auth/logout', { headers: { cookie } });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^session=;.*(Max-Age=0|Expires=Thu, 01 Jan 1970)/);
    expect((await shared.request('GET', '/api/auth/me', { headers: { cookie } })).status).toBe(401);
    expect((await shared.request('POST', '/api/auth/logout', {})).status).toBe(204);
    expect((await shared.request('POST', '/api/auth/logout', { headers: { cookie: 'session=' } })).status).toBe(204);
  });
});

describe('POST /api/users', () => {
  test('the admin creates a user with a password: 201, the user, and no invitation', async () => {
    const admin = await cookieOf(shared, await addUser(shared, true));
    const created = await shared.request('POST', '/api/users', { body: { email: 'New@Example.com', password: 'twelve chars' }, headers: { cookie: admin } });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({ user: { id: expect.any(String), email: 'new@example.com', isAdmin: false, createdAt: expect.any(String), status: 'active', teams: [] }, invite: null });
  });

  test('without a session it is 401 whatever the body; a bad body from the admin is 400', async () => {
    const refused = await shared.request('POST', '/api/users', { body: { email: 'x' } });
    expect(refused.status).toBe(401);
    const admin = await cookieOf(shared, await addUser(shared, true));
    // the route's own limits, checked before the account rules (which would word these differently)
    const cases: Array<[Record<string, unknown>, Record<string, string[]>]> = [
      [{ email: 'ab', password: PASSWORD }, { email: ['expected string length greater or equal to 3'] }],
      [{ email: 'a'.repeat(321), password: PASSWORD }, { email: ['expected string length less or equal to 320'] }],
      [{ email: 'ab@example.com', role: 'owner' }, { role: ['must be one of: viewer, operator, admin'] }],
      [{ email: 'ab@example.com', password: '' }, { password: ['expected string length greater or equal to 1'] }],
      [{ email: 'ab@example.com', password: 'x'.repeat(1025) }, { password: ['expected string length less or equal to 1024'] }],
    ];
    for (const [body, details] of cases) {
      const response = await shared.request('POST', '/api/users', { body, headers: { cookie: admin } });
      expect(response.status).toBe(400);
      expect(response.json.error.code).toBe('VALIDATION_ERROR');
      expect(response.json.error.details).toEqual(details);
    }
  });
});
