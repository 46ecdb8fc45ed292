/**
 * Device cookies (OWASP's defence against lockout by a distributed guesser): a browser
 * that logged in successfully gets a signed cookie naming the user, and later logins
 * that present it are limited by their own count instead of by the per-email bucket the
 * guessers drain (login-limiter.ts). A guesser cannot make one without the password.
 *
 * The value is `<device id>.<issued at, ms in base 36>.<signature>`; the signature is an
 * HMAC over the id, the time and the normalized email, so the cookie names its user
 * without showing the email, is worthless for any other account, and expires after
 * `trustMs` by the service's own clock whatever the browser does with it. The key is
 * derived from the session secret: rotating it ends device trust with the sessions.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

export const DEVICE_COOKIE = 'device';
/** Long enough for an owner who logs in monthly; each successful login issues a fresh one. */
export const DEVICE_TRUST_MS = 90 * 86_400_000;

const DEVICE_ID_BYTES = 16;
/** a cookie issued by another node of a cluster whose clock runs a little ahead is still good */
const CLOCK_SKEW_MS = 60_000;

export class DeviceCookies {
  private readonly key: string;

  constructor(
    sessionSecret: string,
    readonly trustMs: number = DEVICE_TRUST_MS,
  ) {
    // Stryker disable next-line StringLiteral: the label only keeps this key apart from the session secret's other uses; any label does that
    this.key = new Bun.CryptoHasher('sha256', sessionSecret).update('device-cookie').digest('base64url');
  }

  /** A new cookie value for `email` (normalized), issued now. */
  issue(email: string, nowMs: number): string {
    const id = randomBytes(DEVICE_ID_BYTES).toString('base64url');
    const issued = Math.floor(nowMs).toString(36);
    return `${id}.${issued}.${this.sign(id, issued, email)}`;
  }

  /** The device id when `value` is a cookie this service issued for `email` that has not expired; else null. */
  verify(value: string | undefined, email: string, nowMs: number): string | null {
    // (its length is bounded by the server's header limit; the work here is one HMAC of it)
    const parts = value?.split('.');
    if (parts?.length !== 3) return null;
    const [id, issued, signature] = parts as [string, string, string];
    const issuedMs = Number.parseInt(issued, 36);
    if (!Number.isSafeInteger(issuedMs) || issuedMs - nowMs > CLOCK_SKEW_MS || nowMs - issuedMs >= this.trustMs) return null;
    const expected = Buffer.from(this.sign(id, issued, email));
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected) ? id : null;
  }

  private sign(id: string, issued: string, email: string): string {
    return new Bun.CryptoHasher('sha256', this.key).update(`${id}.${issued}.${email}`).digest('base64url');
  }
}
