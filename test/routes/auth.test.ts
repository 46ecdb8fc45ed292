import { describe, expect, test } from 'bun:test';
import { ADMIN, BASE, testApp } from '../support/test-app.ts';

describe('login, logout, me', () => {
  test('login sets an HttpOnly SameSite=Lax session cookie that /api/auth/me accepts', async () => {
    const t = await testApp();
    const response = await t.app.handle(
      new Request(BASE + '/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) }),
    );
    expect(response.status).toBe(200);
    const setCookie = response.headers.get('set-cookie')!;
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Lax');
    expect(setCookie).not.toContain('Secure');
    const cookie = setCookie.split(';')[0]!;
    const me = await t.request('GET', '/api/auth/me', { headers: { cookie } });
    expect(me.status).toBe(200);
    expect(me.json.user.email).toBe(ADMIN.email);
    expect(me.json.user.isAdmin).toBe(true);
  });

  test('a wrong password is 401 and says nothing about which part was wrong', async () => {
    const t = await testApp();
    const wrong = await t.request('POST', '/api/auth/login', { body: { email: ADMIN.email, password: 'not the password' } });
    const unknown = await t.request('POST', '/api/auth/login', { body: { email: 'nobody@example.com', password: 'not the password' } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.json.error.message).toBe(unknown.json.error.message);
  });

  test('dashboard endpoints without a valid session are 401 authentication required', async () => {
    const t = await testApp();
    for (const cookie of [undefined, 'session=forged-token']) {
      const response = await t.request('GET', '/api/auth/me', { headers: cookie ? { cookie } : {} });
      expect(response.status).toBe(401);
      expect(response.json.error.code).toBe('UNAUTHORIZED');
      expect(response.json.error.message).toBe('authentication required');
    }
  });

  test('logout ends the session', async () => {
    const t = await testApp();
    const cookie = await t.login();
    const out = await t.request('POST', '/api/auth/logout', { headers: { cookie } });
    expect(out.status).toBe(204);
    expect((await t.request('GET', '/api/auth/me', { headers: { cookie } })).status).toBe(401);
  });

  test('a session expires after its time to live', async () => {
    const t = await testApp();
    const cookie = await t.login();
    t.clock.advance(7 * 86_400_000 + 1);
    expect((await t.request('GET', '/api/auth/me', { headers: { cookie } })).status).toBe(401);
  });

  test('login body is validated', async () => {
    const t = await testApp();
    const response = await t.request('POST', '/api/auth/login', { body: { email: ADMIN.email } });
    expect(response.status).toBe(400);
    expect(response.json.error.details.password).toBeDefined();
  });
});

describe('users', () => {
  test('the admin creates a user who can log in; emails are unique; non-admins may not create users', async () => {
    const t = await testApp();
    const admin = await t.login();
    const created = await t.request('POST', '/api/users', { body: { email: 'Ops@Example.com', password: 'a long enough pw' }, headers: { cookie: admin } });
    expect(created.status).toBe(201);
    expect(created.json.user.email).toBe('ops@example.com');
    expect(created.json.user.passwordHash).toBeUndefined();
    const again = await t.request('POST', '/api/users', { body: { email: 'ops@example.com', password: 'a long enough pw' }, headers: { cookie: admin } });
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('CONFLICT');
    const user = await t.login('ops@example.com', 'a long enough pw');
    const forbidden = await t.request('POST', '/api/users', { body: { email: 'x@example.com', password: 'a long enough pw' }, headers: { cookie: user } });
    expect(forbidden.status).toBe(403);
    expect(forbidden.json.error.code).toBe('FORBIDDEN');
  });

  test('passwords shorter than 12 characters are refused', async () => {
    const t = await testApp();
    const admin = await t.login();
    const eleven = await t.request('POST', '/api/users', { body: { email: 'a@example.com', password: '12345678901' }, headers: { cookie: admin } });
    expect(eleven.status).toBe(400);
    expect(eleven.json.error.details.password).toEqual(['must be at least 12 characters']);
    const twelve = await t.request('POST', '/api/users', { body: { email: 'a@example.com', password: '123456789012' }, headers: { cookie: admin } });
    expect(twelve.status).toBe(201);
  });

  test('mutating requests from a foreign Origin are 403; the own origin is fine', async () => {
    const t = await testApp();
    const admin = await t.login();
    const body = { email: 'b@example.com', password: 'a long enough pw' };
    const foreign = await t.request('POST', '/api/users', { body, headers: { cookie: admin, origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    const own = await t.request('POST', '/api/users', { body, headers: { cookie: admin, origin: 'http://localhost:3000' } });
    expect(own.status).toBe(201);
  });
});
