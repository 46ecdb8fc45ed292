/**
 * Secrets are shown once and stored only as hashes. API keys and session tokens are
 * 32 random bytes, so a fast SHA-256 is enough (no dictionary to attack); passwords are
 * low-entropy and use Bun's memory-hard argon2id.
 */
import { randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'sk_';
const TOKEN_BYTES = 32;

export function newApiKey(): string {
  return API_KEY_PREFIX + randomBytes(TOKEN_BYTES).toString('base64url');
}

export function newSessionToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

export function sha256Hex(value: string): string {
  return new Bun.CryptoHasher('sha256').update(value).digest('hex');
}

/**
 * Session tokens are stored as an HMAC keyed by the session secret, so rotating the
 * secret ends every session at once (an operator's "log everyone out").
 */
export function sessionTokenHasher(secret: string): (token: string) => string {
  return (token) => new Bun.CryptoHasher('sha256', secret).update(token).digest('hex');
}

export function newSessionSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** What `GET /api/connections` shows of a key: enough to recognize, not to use. */
export function keyPrefixOf(apiKey: string): string {
  return apiKey.slice(0, API_KEY_PREFIX.length + 6);
}

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: 'argon2id' });
}

export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return Bun.password.verify(password, hash);
}

/** A readable one-time admin password (about 120 bits). */
export function newOneTimePassword(): string {
  return randomBytes(15).toString('base64url');
}
