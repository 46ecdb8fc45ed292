/**
 * Users through the routes: an invitation (a single-use link, good for a bounded time)
 * that sets a password and signs in, a reset by the instance admin, a user's own password
 * change, disabling and removing (their sessions and live streams end at once), and the
 * bounds. Passwords are hashed for real (argon2id), so these tests take seconds.
 */
import { describe, expect, test } from 'bun:test';
import { PENDING_LINKS_MAX } from '../../actors/accounts/password-links.ts';
import { sha256Hex } from '../../actors/accounts/secrets.ts';
import { SseMessageReader } from '../support/sse-message-reader.ts';
import { ADMIN, T0, testApp, type TestApp } from '../support/test-app.ts';

const HASHING_MS = 60_000;
const LINK_HOURS = 72;

async function adminCookie(t: TestApp): Promise<string> {
  return t.sessionCookieOf(t.engine.accounts.userByEmail(ADMIN.email)!);
}

const tokenOf = (url: string): string => url.split('#token=')[1]!;

async function setPassword(t: TestApp, token: string, password: string) {
  return t.request('POST', '/api/auth/set-password', { body: { token, password } });
}

describe('invitations', () => {
  test('an invited user gets a link that sets their password and signs them in, into the team they were invited to; the link works once', async () => {
    const t = await testApp();
    const admin = await adminCookie(t);
    const teamId = t.engine.accounts.teams.teamByName('default')!.id;
    const invited = await t.request('POST', '/api/users', { body: { email: 'New@Example.com', teamId, role: 'operator' }, headers: { cookie: admin } });
    expect(invited.status).toBe(201);
    expect(invited.json.user).toMatchObject({ email: 'new@example.com', status: 'invited', isAdmin: false, teams: [{ id: teamId, name: 'default', role: 'operator' }] });
    expect(invited.json.invite).toEqual({ url: expect.stringMatching(/^http:\/\/localhost:3000\/set-password#token=[A-Za-z0-9_-]{43}$/), purpose: 'invite', expiresAt: new Date(T0 + LINK_HOURS * 3_600_000).toISOString() });
    const token = tokenOf(invited.json.invite.url);
    expect(JSON.stringify(t.engine.accounts.toSnapshot())).not.toContain(token); // only its hash is kept

    // no password yet: nothing signs in
    expect((await t.request('POST', '/api/auth/login', { body: { email: 'new@example.com', password: '' } })).status).toBe(400);
    const used = await setPassword(t, token, 'my own long password');
    expect(used.status).toBe(200);
    expect(used.json.user.email).toBe('new@example.com');
    const cookie = used.headers.get('set-cookie')!.split(';')[0]!;
    const me = await t.request('GET', '/api/auth/me', { headers: { cookie } });
    expect(me.json.teams.map((team: { name: string; role: string }) => [team.name, team.role])).toEqual([['default', 'operator']]);
    const again = await setPassword(t, token, 'another long password');
    expect(again.status).toBe(404);
    expect(again.json.error.message).toBe('this link is not valid: it was used, replaced by a newer one, or expired; ask the instance admin for a new one');
    expect((await t.request('POST', '/api/auth/login', { body: { email: 'new@example.com', password: 'my own long password' } })).status).toBe(200);
  }, HASHING_MS);

  test(`a link is good for ${LINK_HOURS} hours and no longer; a newer one replaces it`, async () => {
    const t = await testApp();
    const admin = await adminCookie(t);
    const first = await t.request('POST', '/api/users', { body: { email: 'late@example.com' }, headers: { cookie: admin } });
    const userId = first.json.user.id;
    const second = await t.request('POST', `/api/users/${userId}/password-reset`, { headers: { cookie: admin } });
    expect(second.json.purpose).toBe('invite'); // still no password: it stays an invitation
    expect((await setPassword(t, tokenOf(first.json.invite.url), 'a long password here')).status).toBe(404);
    t.clock.advance(LINK_HOURS * 3_600_000);
    expect((await setPassword(t, tokenOf(second.json.url), 'a long password here')).status).toBe(404);
  });

  test(`at most ${PENDING_LINKS_MAX} links wait at once: past them an invitation is refused whole, with 409 in the envelope`, async () => {
    const t = await testApp();
    const admin = await adminCookie(t);
    for (let i = 0; i < PENDING_LINKS_MAX; i++) {
      const user = { id: `u${i}`, email: `u${i}@example.com`, passwordHash: '', isAdmin: false, createdAtMs: T0 };
      await t.engine.commit({ t: 'user.created', user });
      await t.engine.commit({ t: 'password-link.created', link: { tokenHash: sha256Hex(`token-${i}`), userId: user.id, purpose: 'invite', createdAtMs: T0, expiresAtMs: T0 + 3_600_000 } });
    }
    const refused = await t.request('POST', '/api/users', { body: { email: 'one-more@example.com' }, headers: { cookie: admin } });
    expect(refused.status).toBe(409);
    expect(refused.json.error.message).toContain(`${PENDING_LINKS_MAX} invitations and password resets are waiting`);
    expect(t.engine.accounts.userByEmail('one-more@example.com')).toBeUndefined();
    // once they expire there is room again
    t.clock.advance(3_600_000);
    expect((await t.request('POST', '/api/users', { body: { email: 'one-more@example.com' }, headers: { cookie: admin } })).status).toBe(201);
  });
});

describe('passwords', () => {
  test('a user changes their own password: the current one is checked, their other sessions end, this one goes on', async () => {
    const t = await testApp();
    const cookie = await t.login();
    const other = await t.login();
    const wrong = await t.request('POST', '/api/auth/password', { body: { currentPassword: 'not it at all', newPassword: 'a brand new password' }, headers: { cookie } });
    expect(wrong.status).toBe(400);
    expect(wrong.json.error.details).toEqual({ currentPassword: ['is not your current password'] });
    const short = await t.request('POST', '/api/auth/password', { body: { currentPassword: ADMIN.password, newPassword: 'short' }, headers: { cookie } });
    expect(short.json.error.details).toEqual({ newPassword: ['must be at least 12 characters'] });
    expect((await t.request('POST', '/api/auth/password', { body: { currentPassword: ADMIN.password, newPassword: 'a brand new password' }, headers: { cookie } })).status).toBe(204);
    expect((await t.request('GET', '/api/auth/me', { headers: { cookie } })).status).toBe(200);
    expect((await t.request('GET', '/api/auth/me', { headers: { cookie: other } })).status).toBe(401);
    expect((await t.request('POST', '/api/auth/login', { body: { email: ADMIN.email, password: ADMIN.password } })).status).toBe(401);
    expect((await t.request('POST', '/api/auth/login', { body: { email: ADMIN.email, password: 'a brand new password' } })).status).toBe(200);
  }, HASHING_MS);

  test("the instance admin's reset link: the old password works until it is used; using it ends every session of the user", async () => {
    const t = await testApp();
    const admin = await adminCookie(t);
    const userCookie = await t.createUser(admin, 'forgetful@example.com', 'the old long password');
    const userId = t.engine.accounts.userByEmail('forgetful@example.com')!.id;
    const reset = await t.request('POST', `/api/users/${userId}/password-reset`, { headers: { cookie: admin } });
    expect(reset.json.purpose).toBe('reset');
    expect((await t.request('GET', '/api/auth/me', { headers: { cookie: userCookie } })).status).toBe(200);
    const used = await setPassword(t, tokenOf(reset.json.url), 'the new long password');
    expect(used.status).toBe(200);
    expect((await t.request('GET', '/api/auth/me', { headers: { cookie: userCookie } })).status).toBe(401);
    expect((await t.request('POST', '/api/auth/login', { body: { email: 'forgetful@example.com', password: 'the old long password' } })).status).toBe(401);
  }, HASHING_MS);
});

describe('disabling and removing', () => {
  test('a disabled user is signed out at once, their live stream ends, and they cannot sign in until enabled', async () => {
    const t = await testApp();
    const admin = await adminCookie(t);
    const cookie = await t.createUser(admin, 'leaver@example.com', 'a long password 1');
    const userId = t.engine.accounts.userByEmail('leaver@example.com')!.id;
    const served = t.serve();
    try {
      const response = await fetch(`${served.baseUrl}/api/events/stream`, { headers: { cookie } });
      expect(response.status).toBe(200);
      const reader = new SseMessageReader(response.body!);
      await reader.next(); // the stream's first message: it is open
      const disabled = await t.request('POST', `/api/users/${userId}/disable`, { headers: { cookie: admin } });
      expect(disabled.json.user.status).toBe('disabled');
      let message = await reader.next();
      while (message !== undefined) message = await reader.next();
      expect((await t.request('GET', '/api/auth/me', { headers: { cookie } })).status).toBe(401);
      const refused = await t.request('POST', '/api/auth/login', { body: { email: 'leaver@example.com', password: 'a long password 1' } });
      expect(refused.status).toBe(403);
      expect(refused.json.error.message).toBe('this account is disabled; ask the instance admin to enable it');
      // a wrong password tells nothing of it
      expect((await t.request('POST', '/api/auth/login', { body: { email: 'leaver@example.com', password: 'wrong password 12' } })).status).toBe(401);
      expect((await t.request('POST', `/api/users/${userId}/enable`, { headers: { cookie: admin } })).json.user.status).toBe('active');
      expect((await t.request('POST', '/api/auth/login', { body: { email: 'leaver@example.com', password: 'a long password 1' } })).status).toBe(200);
    } finally {
      await served.stop();
    }
  }, HASHING_MS);

  test('a removed user is signed out at once and leaves their teams; their email can be used again; nobody removes or disables themselves or the last instance admin', async () => {
    const t = await testApp();
    const admin = await adminCookie(t);
    const { user, cookie } = await t.userWithSession('gone@example.com');
    const teamId = t.engine.accounts.teams.teamByName('default')!.id;
    await t.request('POST', `/api/teams/${teamId}/members`, { body: { email: user.email, role: 'viewer' }, headers: { cookie: admin } });
    expect((await t.request('DELETE', `/api/users/${user.id}`, { headers: { cookie: admin } })).status).toBe(204);
    expect((await t.request('GET', '/api/auth/me', { headers: { cookie } })).status).toBe(401);
    expect(t.engine.accounts.teams.membersOf(teamId).map((member) => member.userId)).not.toContain(user.id);
    expect((await t.request('POST', '/api/users', { body: { email: 'gone@example.com' }, headers: { cookie: admin } })).status).toBe(201);
    const adminId = t.engine.accounts.userByEmail(ADMIN.email)!.id;
    for (const [method, path, message] of [
      ['DELETE', `/api/users/${adminId}`, 'you cannot remove yourself'],
      ['POST', `/api/users/${adminId}/disable`, 'you cannot disable yourself'],
    ] as const) {
      const refused = await t.request(method, path, { headers: { cookie: admin } });
      expect([refused.status, refused.json.error.message]).toEqual([409, message]);
    }
    expect((await t.request('DELETE', '/api/users/no-such-user', { headers: { cookie: admin } })).status).toBe(404);
  });

  test('the list shows every user with their state and teams, to the instance admin only', async () => {
    const t = await testApp();
    const admin = await adminCookie(t);
    await t.request('POST', '/api/users', { body: { email: 'invited@example.com' }, headers: { cookie: admin } });
    const listed = await t.request('GET', '/api/users', { headers: { cookie: admin } });
    expect(listed.json.data.map((user: { email: string; status: string; teams: Array<{ name: string }> }) => [user.email, user.status, user.teams.map((team) => team.name)])).toEqual([
      [ADMIN.email, 'active', ['default']],
      ['invited@example.com', 'invited', []],
    ]);
    const { cookie } = await t.userWithSession('someone@example.com');
    expect((await t.request('GET', '/api/users', { headers: { cookie } })).status).toBe(403);
  });
});
