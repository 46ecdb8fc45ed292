/**
 * Users and sessions: login, logout, the current user, user creation and the first admin,
 * and passwords: a user's own change, and the single-use links (invitations and resets)
 * that set one. Managing users (list, invite, disable, remove) is user-service.ts.
 */
import type { User } from '../accounts/account-records.ts';
import { normalizeEmail, PASSWORD_CHARS_MIN } from '../accounts/accounts-actor.ts';
import { DeviceCookies } from '../accounts/device-cookie.ts';
import { LOGIN_LIMITER_DEFAULTS, LoginLimiter, type LoginLimiterOptions } from '../accounts/login-limiter.ts';
import { hashPassword, newOneTimePassword, newSessionToken, sessionTokenHasher, sha256Hex, verifyPassword } from '../accounts/secrets.ts';
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
    // a user without a password (invited, or signing in through SSO only) is checked against the dummy too: no password opens it
    const passwordOk = await verifyPassword(password, user?.passwordHash || (await dummyHash()));
    if (user === undefined || user.passwordHash === '' || !passwordOk) throw new DomainError('UNAUTHORIZED', 'invalid email or password');
    this.limiter.succeeded(attempt);
    // told only to whoever knows the password
    if (user.disabled === true) throw new DomainError('FORBIDDEN', 'this account is disabled; ask the instance admin to enable it');
    return this.startSession(user);
  }

  /** A new session of `user` (a sign-in that succeeded): its token (the cookie value) and a fresh device cookie. */
  async startSession(user: User): Promise<{ token: string; user: User; deviceCookie: string }> {
    const token = newSessionToken();
    const tokenHash = this.hashSessionToken(token);
    await this.engine.commit(this.engine.accounts.decideCreateSession(user, tokenHash, this.sessionTtlMs, this.engine.clock.nowMs()));
    return { token, user, deviceCookie: this.deviceCookies.issue(user.email, this.engine.clock.nowMs()) };
  }

  /**
   * The signed-in user changes their own password: the current one is checked (and counted
   * by the login throttle, so a stolen session cannot guess it quickly), and every other
   * session of theirs ends; this one goes on.
   */
  async changePassword(user: User, sessionKey: string, currentPassword: string, newPassword: string, clientAddress: string): Promise<void> {
    checkPasswordLength(currentPassword);
    checkNewPassword(newPassword, 'newPassword');
    const attempt = this.limiter.admit(clientAddress, user.email, this.engine.clock.nowMs());
    if ('waitSeconds' in attempt) {
      throw new DomainError('RATE_LIMITED', 'too many wrong current passwords; try again later', undefined, undefined, { 'Retry-After': String(attempt.waitSeconds) });
    }
    const current = this.engine.accounts.users.get(user.id);
    if (current === undefined || current.passwordHash === '' || !(await verifyPassword(currentPassword, current.passwordHash))) {
      throw validationError('currentPassword', 'is not your current password');
    }
    this.limiter.succeeded(attempt);
    const passwordHash = await hashPassword(newPassword);
    await this.engine.commit(this.engine.accounts.decideSetPassword(user.id, passwordHash, { keepSession: sessionKey, link: null }));
  }

  /**
   * A password link used: the password is set, the link is used up, every session of the
   * user ends, and a new one starts (the person who opened the link is signed in).
   */
  async setPasswordWithLink(linkToken: string, newPassword: string): Promise<{ token: string; user: User; deviceCookie: string }> {
    checkNewPassword(newPassword, 'password');
    const tokenHash = sha256Hex(linkToken);
    const { accounts } = this.engine;
    const link = accounts.passwordLinks.valid(tokenHash, this.engine.clock.nowMs());
    if (link === undefined) throw new DomainError('NOT_FOUND', 'this link is not valid: it was used, replaced by a newer one, or expired; ask the instance admin for a new one');
    const passwordHash = await hashPassword(newPassword);
    // checked again after the slow hash: the link may have been used meanwhile
    if (accounts.passwordLinks.valid(tokenHash, this.engine.clock.nowMs()) === undefined) throw new DomainError('NOT_FOUND', 'this link was used meanwhile');
    await this.engine.commit(accounts.decideSetPassword(link.userId, passwordHash, { keepSession: null, link: tokenHash }));
    const user = accounts.users.get(link.userId)!;
    if (user.disabled === true) throw new DomainError('FORBIDDEN', 'your password is set, but this account is disabled; ask the instance admin to enable it');
    return this.startSession(user);
  }

  /** How long a device cookie is honoured (its Max-Age). */
  get deviceTrustMs(): number {
    return this.deviceCookies.trustMs;
  }

  /** Ends the session; returns its user, or undefined when there was no live session. */
  async logout(token: string): Promise<User | undefined> {
    const tokenHash = this.hashSessionToken(token);
    const user = this.engine.accounts.sessionUser(tokenHash, this.engine.clock.nowMs());
    if (user === undefined) return undefined;
    await this.engine.commit({ t: 'session.deleted', tokenHash });
    return user;
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
  async ensureAdmin(email: string | null, password: string | null): Promise<{ id: string; email: string; generatedPassword: string | null } | null> {
    for (const user of this.engine.accounts.users.values()) if (user.isAdmin) return null;
    const adminEmail = email ?? 'admin@localhost';
    const generatedPassword = password === null ? newOneTimePassword() : null;
    const admin = await this.addUser(adminEmail, password ?? generatedPassword!, true);
    return { id: admin.id, email: adminEmail, generatedPassword };
  }
}

function checkCredentials(email: string, password: string): void {
  checkEmail(email);
  checkNewPassword(password, 'password');
}

export function checkEmail(email: string): void {
  if (!EMAIL_PATTERN.test(email.trim())) throw validationError('email', 'must be an email address');
}

export function checkNewPassword(password: string, field: string): void {
  if (password.length < PASSWORD_CHARS_MIN) throw validationError(field, `must be at least ${PASSWORD_CHARS_MIN} characters`);
  if (password.length > PASSWORD_CHARS_MAX) throw validationError(field, `must be at most ${PASSWORD_CHARS_MAX} characters`);
}

/** Refused rather than cut: a cut password would accept every string sharing its first characters. */
function checkPasswordLength(password: string): void {
  if (password.length > PASSWORD_CHARS_MAX) throw validationError('password', `must be at most ${PASSWORD_CHARS_MAX} characters`);
}
