/**
 * The login throttle through the route, with the injected clock: counted before the
 * password is verified, exact Retry-After values, backoff instead of a lockout, and
 * successes that give back only their own attempt. (Requests through `app.handle` have
 * no peer address, so they all share one; per-address behaviour is in client-address.)
 */
import { describe, expect, test } from 'bun:test';
import { LOGIN_LIMITER_DEFAULTS } from '../../actors/accounts/login-limiter.ts';
import { PASSWORD_CHARS_MAX } from '../../actors/services/account-service.ts';
import { ADMIN, testApp, type TestApp } from '../support/test-app.ts';

const FREE = LOGIN_LIMITER_DEFAULTS.pairFailuresFree;
const login = (t: TestApp, email: string, password: string) => t.request('POST', '/api/auth/login', { body: { email, password } });

describe('login throttle', () => {
  test('parallel guesses are counted before the password is verified: only the free ones are tried', async () => {
    const t = await testApp();
    const guesses = await Promise.all(Array.from({ length: 30 }, (_, i) => login(t, ADMIN.email, `wrong password ${i}`)));
    const statuses = guesses.map((guess) => guess.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(FREE);
    expect(statuses.filter((status) => status === 429)).toHaveLength(30 - FREE);
  });

  test('after the free failures each attempt waits an exact, doubling backoff; then the right password works', async () => {
    const t = await testApp();
    for (let i = 0; i < FREE; i++) expect((await login(t, ADMIN.email, 'wrong password')).status).toBe(401);
    const first = await login(t, ADMIN.email, ADMIN.password);
    expect(first.status).toBe(429);
    expect(first.json.error.code).toBe('RATE_LIMITED');
    expect(first.headers.get('retry-after')).toBe(String(LOGIN_LIMITER_DEFAULTS.pairBackoffBaseMs / 1000));
    t.clock.advance(LOGIN_LIMITER_DEFAULTS.pairBackoffBaseMs);
    expect((await login(t, ADMIN.email, 'wrong password')).status).toBe(401);
    t.clock.advance(500);
    // next allowed = (base) after the 6th failure * 2 = 2000 ms; 500 ms of it passed -> 1.5 s -> 2
    const second = await login(t, ADMIN.email, ADMIN.password);
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('2');
    t.clock.advance(1_500);
    expect((await login(t, ADMIN.email, ADMIN.password)).status).toBe(200);
    // the success cleared the pair: failures start over as free ones
    expect((await login(t, ADMIN.email, 'wrong password')).status).toBe(401);
  });

  test('refused attempts do not extend the wait', async () => {
    const t = await testApp();
    for (let i = 0; i < FREE; i++) await login(t, ADMIN.email, 'wrong password');
    for (let i = 0; i < 50; i++) expect((await login(t, ADMIN.email, 'wrong password')).status).toBe(429);
    t.clock.advance(LOGIN_LIMITER_DEFAULTS.pairBackoffBaseMs);
    expect((await login(t, ADMIN.email, ADMIN.password)).status).toBe(200);
  });

  test("a success does not erase another email's failures", async () => {
    const t = await testApp();
    const admin = await t.login();
    await t.createUser(admin, 'victim@example.com', 'the victims password');
    for (let i = 0; i < FREE; i++) expect((await login(t, 'victim@example.com', 'wrong password')).status).toBe(401);
    expect((await login(t, ADMIN.email, ADMIN.password)).status).toBe(200);
    const still = await login(t, 'victim@example.com', 'wrong password');
    expect(still.status).toBe(429);
    expect(still.headers.get('retry-after')).toBe('1');
  });

  test('a password longer than the limit is refused with 400, not cut to the limit', async () => {
    const t = await testApp();
    const admin = await t.login();
    const password = 'p'.repeat(PASSWORD_CHARS_MAX);
    await t.createUser(admin, 'long@example.com', password);
    const longer = await login(t, 'long@example.com', password + 'anything after the limit');
    expect(longer.status).toBe(400);
    expect(longer.json.error.code).toBe('VALIDATION_ERROR');
    expect(longer.json.error.details.password).toEqual([`must be at most ${PASSWORD_CHARS_MAX} characters`]);
    expect((await login(t, 'long@example.com', password)).status).toBe(200);
  });
});
