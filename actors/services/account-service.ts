/** Users and sessions: login, logout, the current user, user creation and the first admin. */
import type { User } from '../accounts/account-records.ts';
import { normalizeEmail, PASSWORD_CHARS_MIN } from '../accounts/accounts-actor.ts';
import { DeviceCookies } from '../accounts/device-cookie.ts';
import { LOGIN_LIMITER_DEFAULTS, LoginLimiter, type LoginLimiterOptions } from '../accounts/login-limiter.ts';
import { hashPassword, newOneTimePassword, newSessionToken, sessionTokenHasher, verifyPassword } from '../accounts/secrets.ts';
import { DomainError, validationError } from '../domain-error.ts';
import type { Engine } from '../engine.ts';

export interface PublicUser {
  id: string;
  email: string;
  isAdmin: boolean;
  createdAt: string;
}

export function publicUser(user: User): PublicUser {
  return { id: user.id, email: user.email, isAdmin: user.isAdmin, createdAt: new Date(user.createdAtMs).toISOString() };
}

const EMAIL_PATTERN = /^[^\s@]{1,64}@[^\s@]{1,255}$/;
/** argon2 hashes the whole input; an unbounded password is a CPU lever for attackers */
export const PASSWORD_CHARS_MAX = 256;
/**
 * Verified against when the email is unknown, so response time does not reveal which emails
 * exist. Hashed once per process, started when the first AccountService is made (after
 * recovery, off the event loop): awaiting it at import held every start back by one argon2 hash.
 */
let dummyPasswordHash: Promise<string> | undefined;
function dummyHash(): Promise<string> {
  dummyPasswordHash ??= hashPassword('not-a-real-password-for-timing');
  return dummyPasswordHash;
}

export class AccountService {
  private readonly limiter: LoginLimiter;
  private readonly hashSessionToken: (token: string) => string;
  private readonly deviceCookies: DeviceCookies;

  constructor(
    private readonly engine: Engine,
    private readonly sessionTtlMs: number,
    sessionSecret: string,
    limiterOptions: LoginLimiterOptions = LOGIN_LIMITER_DEFAULTS,
  ) {
    this.hashSessionToken = sessionTokenHasher(sessionSecret);
    this.limiter = new LoginLimiter(limiterOptions);
    this.deviceCookies = new DeviceCookies(sessionSecret);
    void dummyHash();
  }

  /**
   * Returns the new session token (the cookie value) and a fresh device cookie for this
   * browser. `deviceCookie`: the one it presented, if any (device-cookie.ts).
   */
  async login(email: string, password: string, clientAddress: string, deviceCookie?: string): Promise<{ token: string; user: User; deviceCookie: string }> {
    checkPasswordLength(password);
    const normalized = normalizeEmail(email);
    const nowMs = this.engine.clock.nowMs();
    const device = this.deviceCookies.verify(deviceCookie, normalized, nowMs) ?? undefined;
    // Counted before the slow verification: parallel guesses must not all pass one check.
    const attempt = this.limiter.admit(clientAddress, normalized, nowMs, device);
    if ('waitSeconds' in attempt) {
      throw new DomainError('RATE_LIMITED', 'too many failed logins; try again later', undefined, undefined, {
        'Retry-After': String(attempt.waitSeconds),
      });
    }
    const user = this.engine.accounts.userByEmail(email);
    const passwordOk = await verifyPassword(password, user?.passwordHash ?? (await dummyHash()));
    if (user === undefined || !passwordOk) throw new DomainError('UNAUTHORIZED', 'invalid email or password');
    this.limiter.succeeded(attempt);
    const token = newSessionToken();
    const tokenHash = this.hashSessionToken(token);
    await this.engine.commit(this.engine.accounts.decideCreateSession(user, tokenHash, this.sessionTtlMs, this.engine.clock.nowMs()));
    return { token, user, deviceCookie: this.deviceCookies.issue(normalized, this.engine.clock.nowMs()) };
  }

  /** How long a device cookie is honoured (its Max-Age). */
  get deviceTrustMs(): number {
    return this.deviceCookies.trustMs;
  }

  async logout(token: string): Promise<void> {
    const tokenHash = this.hashSessionToken(token);
    if (this.engine.accounts.sessionUser(tokenHash, this.engine.clock.nowMs()) === undefined) return;
    await this.engine.commit({ t: 'session.deleted', tokenHash });
  }

  /** The user of a session cookie, or a 401. */
  requireUser(token: string | undefined): User {
    return this.requireSession(token).user;
  }

  /** The user of a session cookie and the session's key (what a live stream is tied to), or a 401. */
  requireSession(token: string | undefined): { user: User; sessionKey: string } {
    const sessionKey = token ? this.hashSessionToken(token) : '';
    const user = token ? this.engine.accounts.sessionUser(sessionKey, this.engine.clock.nowMs()) : undefined;
    if (user === undefined) throw new DomainError('UNAUTHORIZED', 'authentication required');
    return { user, sessionKey };
  }

  async createUser(actor: User, email: string, password: string): Promise<User> {
    if (!actor.isAdmin) throw new DomainError('FORBIDDEN', 'only an admin can create users');
    return this.addUser(email, password, false);
  }

  async addUser(email: string, password: string, isAdmin: boolean): Promise<User> {
    checkCredentials(email, password);
    const passwordHash = await hashPassword(password);
    const record = this.engine.accounts.decideCreateUser(email, passwordHash, isAdmin, this.engine.clock.nowMs());
    await this.engine.commit(record);
    return this.engine.accounts.userByEmail(email)!;
  }

  /**
   * First start with no admin (users made with the CLI may exist already): the admin
   * comes from configuration, or gets a one-time password returned to print once.
   */
  async ensureAdmin(email: string | null, password: string | null): Promise<{ email: string; generatedPassword: string | null } | null> {
    for (const user of this.engine.accounts.users.values()) if (user.isAdmin) return null;
    const adminEmail = email ?? 'admin@localhost';
    const generatedPassword = password === null ? newOneTimePassword() : null;
    await this.addUser(adminEmail, password ?? generatedPassword!, true);
    return { email: adminEmail, generatedPassword };
  }
}

function checkCredentials(email: string, password: string): void {
  if (!EMAIL_PATTERN.test(email.trim())) throw validationError('email', 'must be an email address');
  if (password.length < PASSWORD_CHARS_MIN) throw validationError('password', `must be at least ${PASSWORD_CHARS_MIN} characters`);
  checkPasswordLength(password);
}

/** Refused rather than cut: a cut password would accept every string sharing its first characters. */
function checkPasswordLength(password: string): void {
  if (password.length > PASSWORD_CHARS_MAX) throw validationError('password', `must be at most ${PASSWORD_CHARS_MAX} characters`);
}
