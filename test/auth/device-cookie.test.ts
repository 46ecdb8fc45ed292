/**
 * Device cookies: what makes a cookie valid (signature, user, age, secret), and the
 * owner's login through the route while a distributed guesser drains the per-email
 * bucket from hundreds of addresses (a real loopback server as the trusted proxy that
 * forwards their addresses; time from the injected clock).
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { DEVICE_COOKIE, DEVICE_TRUST_MS, DeviceCookies } from '../../actors/accounts/device-cookie.ts';
import { ADMIN, testApp } from '../support/test-app.ts';

/** Each admitted login verifies an argon2 hash; on a busy machine that is slow. */
const SLOW_MS = 240_000;
const T = Date.parse('2026-11-21T10:00:00.000Z');
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

describe('DeviceCookies', () => {
  const cookies = new DeviceCookies('a-session-secret-of-length');

  test('a cookie issued for an email verifies for that email to its device id, and only for it', () => {
    const value = cookies.issue('ada@example.com', T);
    const id = cookies.verify(value, 'ada@example.com', T);
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(value.startsWith(`${id}.`)).toBe(true);
    expect(cookies.verify(value, 'bob@example.com', T)).toBeNull();
    expect(cookies.issue('ada@example.com', T)).not.toBe(value); // each a new device id
  });

  test('a clock with fractions of a millisecond issues a valid cookie', () => {
    expect(cookies.verify(cookies.issue('ada@example.com', T + 66.67), 'ada@example.com', T + 70)).not.toBeNull();
  });

  test('it expires after the trust period by the service clock, and a time far ahead is refused', () => {
    const value = cookies.issue('ada@example.com', T);
    expect(cookies.verify(value, 'ada@example.com', T + DEVICE_TRUST_MS - 1)).not.toBeNull();
    expect(cookies.verify(value, 'ada@example.com', T + DEVICE_TRUST_MS)).toBeNull();
    // issued by a node whose clock runs a little ahead: still good; far ahead: forged or broken
    expect(cookies.verify(value, 'ada@example.com', T - 60_000)).not.toBeNull();
    expect(cookies.verify(value, 'ada@example.com', T - 61_000)).toBeNull();
  });

  test('a changed id, time or signature, another secret, garbage and overlong values are refused', () => {
    const value = cookies.issue('ada@example.com', T);
    const [id, issued, signature] = value.split('.') as [string, string, string];
    const flip = (text: string) => (text[0] === 'A' ? 'B' : 'A') + text.slice(1);
    for (const forged of [`${flip(id)}.${issued}.${signature}`, `${id}.${(T - 1).toString(36)}.${signature}`, `${id}.${issued}.${flip(signature)}`, `${id}.${issued}.${signature.slice(1)}`, `${id}.${issued}.${signature}A`, `${value}.x`, `.${issued}.${signature}`, `${id}.${issued}`, '', 'garbage', `${id}.zz.${signature}`, `${value}${'A'.repeat(40)}`]) {
      expect(cookies.verify(forged, 'ada@example.com', T)).toBeNull();
    }
    expect(cookies.verify(undefined, 'ada@example.com', T)).toBeNull();
    expect(new DeviceCookies('another-session-secret').verify(value, 'ada@example.com', T)).toBeNull();
  });
});

describe("the owner's login under a distributed guesser (through a trusted proxy)", () => {
  async function proxied() {
    // a smaller burst keeps the argon2 work of the admitted guesses small; the rule is the same
    const t = await testApp({ trustedProxies: ['127.0.0.1'], nowMs: T, loginLimiter: { emailBurst: 5 } });
    const server = t.serve();
    stops.push(server.stop);
    const login = (from: string, password: string, device?: string) =>
      fetch(server.baseUrl + '/api/auth/login', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': from, ...(device === undefined ? {} : { cookie: `${DEVICE_COOKIE}=${device}` }) },
        body: JSON.stringify({ email: ADMIN.email, password }),
      });
    return { t, login };
  }

  const deviceCookieOf = (response: Response): string | undefined =>
    response.headers
      .getSetCookie()
      .find((cookie) => cookie.startsWith(`${DEVICE_COOKIE}=`))
      ?.split(';')[0]!
      .slice(DEVICE_COOKIE.length + 1);

  test('a successful login sets an HttpOnly, SameSite=Strict device cookie for the login path, next to the session cookie', async () => {
    const { login } = await proxied();
    const response = await login('198.51.100.7', ADMIN.password);
    expect(response.status).toBe(200);
    const [session, device] = response.headers.getSetCookie();
    expect(session).toStartWith('session=');
    expect(device).toStartWith(`${DEVICE_COOKIE}=`);
    expect(device).toContain('Path=/api/auth');
    expect(device).toContain('HttpOnly');
    expect(device).toContain('SameSite=Strict');
    expect(device).toContain(`Max-Age=${DEVICE_TRUST_MS / 1000}`);
    expect((await login('198.51.100.7', 'a wrong password')).headers.getSetCookie()).toEqual([]);
  }, SLOW_MS);

  test('444 rotating addresses at 15 guesses a second: the owner with a device cookie gets in every second, the guesser stays at one guess per refill', async () => {
    const { t, login } = await proxied();
    let device = deviceCookieOf(await login('198.51.100.7', ADMIN.password));
    expect(device).toBeDefined();
    const guessers = Array.from({ length: 444 }, (_, i) => `203.0.${i >> 8}.${i & 255}`);
    const seconds = 12;
    let guessesTried = 0;
    let ownerIn = 0;
    let next = 0;
    for (let second = 0; second < seconds; second++) {
      for (let step = 0; step < 15; step++) {
        const status = (await login(guessers[next++ % guessers.length]!, `guess ${next}`)).status;
        expect([401, 429]).toContain(status);
        if (status === 401) guessesTried++;
        t.clock.advance(1_000 / 15);
      }
      const owner = await login('198.51.100.7', ADMIN.password, device);
      if (owner.status === 200) {
        ownerIn++;
        device = deviceCookieOf(owner);
      }
    }
    expect(ownerIn).toBe(seconds);
    // 5 in the burst, then one per 3 s
    expect(guessesTried).toBeLessThanOrEqual(5 + Math.ceil((seconds * 1_000) / 3_000));
    // the owner on a new device (no cookie) still waits with the guessers: at an instant the guessers found the bucket empty
    let refused = false;
    for (let i = 0; i < 3 && !refused; i++) refused = (await login(guessers[next++ % guessers.length]!, 'one more guess')).status === 429;
    expect(refused).toBe(true);
    expect((await login('198.51.100.8', ADMIN.password)).status).toBe(429);
  }, SLOW_MS);

  test("a device cookie of another user, or a forged one, gets no bucket of its own", async () => {
    const { t, login } = await proxied();
    const other = new DeviceCookies('test-session-secret').issue('someone-else@example.com', T);
    const forged = new DeviceCookies('not-the-service-secret').issue(ADMIN.email, T);
    for (let i = 0; i < 5; i++) expect((await login(`203.0.113.${i}`, 'guess')).status).toBe(401); // the burst, drained
    for (const device of [other, forged]) {
      const refused = await login('198.51.100.7', ADMIN.password, device);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('3');
    }
    // the service's own cookie for this user does get through (same secret the test app uses)
    const genuine = new DeviceCookies('test-session-secret').issue(ADMIN.email, t.clock.nowMs());
    expect((await login('198.51.100.7', ADMIN.password, genuine)).status).toBe(200);
  }, SLOW_MS);
});
