/**
 * The signature a node puts on a request it forwards: only the same secret, method, path,
 * client and a timestamp within 30 s verify; everything else is a request from the peer.
 */
import { describe, expect, test } from 'bun:test';
import { FORWARD_SIGNATURE_MAX_AGE_MS, signForward, verifyForward } from '../../src/http/forward-signature.ts';

const SECRET = 'a-cluster-secret-for-tests';
const CLIENT = { address: '198.51.100.7', host: 'jobwatch.example:8080', https: true };
const NOW = Date.parse('2026-11-23T12:00:00Z');
const signed = signForward(SECRET, 'POST', '/api/auth/login?x=1', CLIENT, NOW);

describe('forward signature', () => {
  test('verifies with the same secret, method and path, within the age limit either way', () => {
    expect(verifyForward(SECRET, 'POST', '/api/auth/login?x=1', signed, NOW)).toEqual(CLIENT);
    expect(verifyForward(SECRET, 'post', '/api/auth/login?x=1', signed, NOW + FORWARD_SIGNATURE_MAX_AGE_MS)).toEqual(CLIENT);
    expect(verifyForward(SECRET, 'POST', '/api/auth/login?x=1', signed, NOW - FORWARD_SIGNATURE_MAX_AGE_MS)).toEqual(CLIENT);
  });

  test('stale, another secret, method, path or query: not believed', () => {
    expect(verifyForward(SECRET, 'POST', '/api/auth/login?x=1', signed, NOW + FORWARD_SIGNATURE_MAX_AGE_MS + 1)).toBeNull();
    expect(verifyForward(SECRET, 'POST', '/api/auth/login?x=1', signed, NOW - FORWARD_SIGNATURE_MAX_AGE_MS - 1)).toBeNull();
    expect(verifyForward('another-secret-of-the-same-kind', 'POST', '/api/auth/login?x=1', signed, NOW)).toBeNull();
    expect(verifyForward(SECRET, 'GET', '/api/auth/login?x=1', signed, NOW)).toBeNull();
    expect(verifyForward(SECRET, 'POST', '/api/auth/logout?x=1', signed, NOW)).toBeNull();
    expect(verifyForward(SECRET, 'POST', '/api/auth/login?x=2', signed, NOW)).toBeNull();
  });

  test('a changed client, timestamp or malformed header: not believed', () => {
    const [stamp, payload, mac] = signed.split('.');
    const otherClient = Buffer.from(JSON.stringify(['203.0.113.1', CLIENT.host, true])).toString('base64url');
    expect(verifyForward(SECRET, 'POST', '/api/auth/login?x=1', `${stamp}.${otherClient}.${mac}`, NOW)).toBeNull();
    expect(verifyForward(SECRET, 'POST', '/api/auth/login?x=1', `${Number(stamp) + 1}.${payload}.${mac}`, NOW)).toBeNull();
    for (const header of [null, '', 'garbage', `${stamp}.${payload}`, `${signed}.extra`, `x${signed}`, `${stamp}.${payload}.zz`]) {
      expect(verifyForward(SECRET, 'POST', '/api/auth/login?x=1', header, NOW)).toBeNull();
    }
  });
});
