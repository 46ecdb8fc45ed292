/**
 * The secrets (API keys, session tokens, their hashes, passwords) and how a request
 * presents its credentials: `Authorization: Bearer` for the API, the session cookie for
 * the dashboard. Direct calls, no server.
 */
import { describe, expect, test } from 'bun:test';
import { createHash, createHmac } from 'node:crypto';
import type { User } from '../../actors/accounts/account-records.ts';
import {
  API_KEY_PREFIX,
  hashPassword,
  keyPrefixOf,
  newApiKey,
  newOneTimePassword,
  newSessionSecret,
  newSessionToken,
  sessionTokenHasher,
  sha256Hex,
  verifyPassword,
} from '../../actors/accounts/secrets.ts';
import type { AccountService } from '../../actors/services/account-service.ts';
import { bearerToken } from '../../src/http/api-key.ts';
import { dashboardSession, SESSION_COOKIE } from '../../src/http/dashboard-auth.ts';

const BASE64URL_32_BYTES = /^[A-Za-z0-9_-]{43}$/;

describe('secrets', () => {
  test('an API key is sk_ and 32 random bytes in base64url; no two are alike', () => {
    const keys = new Set(Array.from({ length: 50 }, newApiKey));
    expect(keys.size).toBe(50);
    for (const key of keys) {
      expect(key.startsWith(API_KEY_PREFIX)).toBe(true);
      expect(key.slice(API_KEY_PREFIX.length)).toMatch(BASE64URL_32_BYTES);
    }
    expect(API_KEY_PREFIX).toBe('sk_');
  });

  test('session tokens and session secrets are 32 random bytes in base64url', () => {
    for (const make of [newSessionToken, newSessionSecret]) {
      const values = new Set(Array.from({ length: 50 }, make));
      expect(values.size).toBe(50);
      for (const value of values) expect(value).toMatch(BASE64URL_32_BYTES);
    }
  });

  test('a one-time password is 15 random bytes (20 base64url characters)', () => {
    const values = new Set(Array.from({ length: 50 }, newOneTimePassword));
    expect(values.size).toBe(50);
    for (const value of values) expect(value).toMatch(/^[A-Za-z0-9_-]{20}$/);
  });

  test('sha256Hex is the SHA-256 of the text in hex', () => {
    expect(sha256Hex('sk_example')).toBe(createHash('sha256').update('sk_example').digest('hex'));
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  test('a session token is stored as its HMAC-SHA-256 under the session secret: another secret gives another hash', () => {
    const hash = sessionTokenHasher('secret-one-0123456');
    expect(hash('token')).toBe(createHmac('sha256', 'secret-one-0123456').update('token').digest('hex'));
    expect(sessionTokenHasher('secret-two-0123456')('token')).not.toBe(hash('token'));
    expect(hash('token')).not.toBe(sha256Hex('token'));
  });

  test('the shown prefix of a key is sk_ and its next 6 characters', () => {
    expect(keyPrefixOf('sk_abcdefghijkl')).toBe('sk_abcdef');
  });

  test('a password is hashed with argon2id and verifies only itself', async () => {
    const hash = await hashPassword('correct horse battery');
    expect(hash.startsWith('$argon2id$')).toBe(true);
    expect(await verifyPassword('correct horse battery', hash)).toBe(true);
    expect(await verifyPassword('correct horse batterY', hash)).toBe(false);
  });
});

describe('bearerToken', () => {
  const withAuthorization = (value?: string) => new Request('http://localhost/api/ingest', { headers: value === undefined ? {} : { authorization: value } });

  test('the token of `Bearer <token>`, in any case of the scheme and with surrounding spaces', () => {
    expect(bearerToken(withAuthorization('Bearer sk_abc'))).toBe('sk_abc');
    expect(bearerToken(withAuthorization('bearer sk_abc'))).toBe('sk_abc');
    expect(bearerToken(withAuthorization('BEARER   sk_abc  '))).toBe('sk_abc');
  });

  test('no header, another scheme, no token, two tokens or text before the scheme give no token', () => {
    for (const value of [undefined, 'Basic c2s6', 'Bearer', 'Bearer ', 'Bearer a b', 'xBearer sk_abc', 'Bearersk_abc', 'Token sk_abc']) {
      expect(bearerToken(withAuthorization(value))).toBeNull();
    }
  });
});

describe('dashboardSession', () => {
  const someone = { id: 'u1', email: 'ada@example.com' } as User;
  /** An account service that knows one token; what the cookie gave it is recorded. */
  function accounts() {
    const seen: Array<string | undefined> = [];
    const service = {
      requireSession(token: string | undefined) {
        seen.push(token);
        if (token !== 'good-token') throw new Error('authentication required');
        return { user: someone, sessionKey: 'the-session-key' };
      },
    } as unknown as AccountService;
    return { service, seen };
  }
  const request = new Request('http://localhost/api/auth/me');

  test(`the "${SESSION_COOKIE}" cookie's value names the user`, () => {
    const { service, seen } = accounts();
    expect(SESSION_COOKIE).toBe('session');
    expect(dashboardSession(service, { request, cookie: { session: { value: 'good-token' } } })).toEqual({ user: someone, sessionKey: 'the-session-key' });
    expect(seen).toEqual(['good-token']);
  });

  test('a missing cookie, another cookie or a value that is not text counts as no token', () => {
    const { service, seen } = accounts();
    for (const cookie of [{}, { other: { value: 'good-token' } }, { session: { value: 42 } }, { session: undefined }]) {
      expect(() => dashboardSession(service, { request, cookie })).toThrow('authentication required');
    }
    expect(seen).toEqual([undefined, undefined, undefined, undefined]);
  });
});
