/**
 * The client address the login limiter keys on: the peer, or behind a trusted proxy the
 * nearest untrusted hop of the forwarded chain. The per-address and per-email layers of
 * the limiter are tested here through a real loopback server acting as that proxy.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { LOGIN_LIMITER_DEFAULTS } from '../../actors/accounts/login-limiter.ts';
import { clientAddress } from '../../src/http/client-address.ts';
import { TrustedProxies } from '../../src/http/trusted-proxies.ts';
import { ADMIN, testApp } from '../support/test-app.ts';

/** Each login verifies an argon2 hash; on a busy machine that is slow. */
const SLOW_MS = 60_000;
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

const peer = (address: string) => ({ requestIP: () => ({ address }) });
const withHeaders = (headers: Record<string, string>) => new Request('http://localhost/api/auth/login', { headers });

describe('clientAddress', () => {
  const config = { trustedProxies: TrustedProxies.parse('10.0.0.0/8, ::1') };

  test('an untrusted peer is the client, whatever it forwards', () => {
    expect(clientAddress(withHeaders({ 'x-forwarded-for': '1.2.3.4' }), peer('198.51.100.7'), config)).toBe('198.51.100.7');
    expect(clientAddress(withHeaders({ forwarded: 'for=1.2.3.4' }), peer('::ffff:198.51.100.7'), config)).toBe('198.51.100.7');
    expect(clientAddress(withHeaders({}), null, config)).toBe('unknown');
  });

  test('behind trusted proxies the nearest untrusted hop is the client; invented hops further left are ignored', () => {
    const chain = { 'x-forwarded-for': '6.6.6.6, 203.0.113.5, 10.1.1.1' };
    expect(clientAddress(withHeaders(chain), peer('10.0.0.2'), config)).toBe('203.0.113.5');
    expect(clientAddress(withHeaders({ forwarded: 'for=6.6.6.6, for="[2001:db8::5]:4711";proto=https, for=10.2.2.2' }), peer('::1'), config)).toBe('2001:db8::5');
    expect(clientAddress(withHeaders({ 'x-forwarded-for': '10.3.3.3' }), peer('10.0.0.2'), config)).toBe('10.3.3.3');
    expect(clientAddress(withHeaders({}), peer('10.0.0.2'), config)).toBe('10.0.0.2');
  });

  test('TRUSTED_PROXIES entries are checked', () => {
    expect(() => TrustedProxies.parse('10.0.0.0/33')).toThrow('prefix length');
    expect(() => TrustedProxies.parse('proxy.local')).toThrow('not an IP address');
  }, SLOW_MS);
});

describe('login limit per client address (through a trusted proxy on loopback)', () => {
  async function proxiedLogin(options: Parameters<typeof testApp>[0] = {}) {
    const t = await testApp({ trustedProxies: ['127.0.0.1'], ...options });
    const server = t.serve();
    stops.push(server.stop);
    const login = (from: string, email: string, password: string) =>
      fetch(server.baseUrl + '/api/auth/login', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
        body: JSON.stringify({ email, password }),
      });
    return { t, login };
  }

  test("an attacker's failures do not lock the owner out from another address", async () => {
    const { login } = await proxiedLogin();
    for (let i = 0; i < LOGIN_LIMITER_DEFAULTS.pairFailuresFree; i++) expect((await login('198.51.100.1', ADMIN.email, 'wrong password')).status).toBe(401);
    expect((await login('198.51.100.1', ADMIN.email, ADMIN.password)).status).toBe(429);
    expect((await login('203.0.113.7', ADMIN.email, ADMIN.password)).status).toBe(200);
  }, SLOW_MS);

  test('one address spraying many emails hits its cap with the exact Retry-After; a success does not reset the cap; other addresses are free', async () => {
    const addressFailuresMax = 4;
    const { t, login } = await proxiedLogin({ loginLimiter: { addressFailuresMax } });
    for (let i = 0; i < addressFailuresMax - 1; i++) expect((await login('198.51.100.1', `user${i}@example.com`, 'wrong password')).status).toBe(401);
    t.clock.advance(60_000);
    expect((await login('198.51.100.1', ADMIN.email, ADMIN.password)).status).toBe(200); // gives back only its own attempt
    expect((await login('198.51.100.1', 'last@example.com', 'wrong password')).status).toBe(401);
    const refused = await login('198.51.100.1', 'next@example.com', 'wrong password');
    expect(refused.status).toBe(429);
    // the window opened with the first failure; one minute of it has passed
    expect(refused.headers.get('retry-after')).toBe(String(LOGIN_LIMITER_DEFAULTS.addressWindowMs / 1000 - 60));
    expect(((await refused.json()) as any).error.code).toBe('RATE_LIMITED');
    expect((await login('198.51.100.2', 'next@example.com', 'wrong password')).status).toBe(401);
  }, SLOW_MS);

  test('a guesser spread over many addresses is slowed per email to one try per refill, never blocked longer', async () => {
    const emailBurst = 4;
    const { t, login } = await proxiedLogin({ loginLimiter: { emailBurst } });
    const { emailRefillMs } = LOGIN_LIMITER_DEFAULTS;
    for (let i = 0; i < emailBurst; i++) expect((await login(`198.51.100.${i + 1}`, ADMIN.email, 'wrong password')).status).toBe(401);
    const slowed = await login('203.0.113.1', ADMIN.email, 'wrong password');
    expect(slowed.status).toBe(429);
    expect(slowed.headers.get('retry-after')).toBe(String(emailRefillMs / 1000));
    t.clock.advance(emailRefillMs);
    expect((await login('203.0.113.1', ADMIN.email, ADMIN.password)).status).toBe(200);
  }, SLOW_MS);
});
