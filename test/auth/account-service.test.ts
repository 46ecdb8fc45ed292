/**
 * Login, logout, sessions and user creation through AccountService on an in-memory
 * engine, without HTTP. Users made for login tests carry a cheap argon2id hash (verifying
 * reads the cost from the hash), so only the tests about creating users pay the real cost.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import type { User } from '../../actors/accounts/account-records.ts';
import { verifyPassword } from '../../actors/accounts/secrets.ts';
import { LOGIN_LIMITER_DEFAULTS } from '../../actors/accounts/login-limiter.ts';
import { ManualClock } from '../../actors/clock.ts';
import { DomainError } from '../../actors/domain-error.ts';
import { Engine } from '../../actors/engine.ts';
import { AccountService, PASSWORD_CHARS_MAX, publicUser } from '../../actors/services/account-service.ts';

const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const TTL_MS = 3_600_000;
const PASSWORD = 'correct horse battery';
const LIMITS = { dailyEventLimit: 0, dedupKeysMax: 10, maxJobsPerConnection: 10, retentionMs: 86_400_000 };
let cheapHash = '';
beforeAll(async () => {
  cheapHash = await Bun.password.hash(PASSWORD, { algorithm: 'argon2id', memoryCost: 8, timeCost: 1 });
});

async function service(options: { limiter?: Partial<typeof LOGIN_LIMITER_DEFAULTS>; users?: Array<Partial<User> & { email: string }> } = {}) {
  const clock = new ManualClock(T0);
  const appended: unknown[] = [];
  const engine = new Engine({ clock, log: { append: async (record) => appended.push(record) }, limits: LIMITS });
  const accounts = new AccountService(engine, TTL_MS, 'a-session-secret-of-length', { ...LOGIN_LIMITER_DEFAULTS, ...options.limiter });
  for (const [index, user] of (options.users ?? []).entries()) {
    await engine.commit({ t: 'user.created', user: { id: `u${index}`, passwordHash: cheapHash, isAdmin: false, createdAtMs: T0, ...user } });
  }
  return { clock, engine, accounts, appended };
}

async function domainErrorOf(run: () => unknown): Promise<DomainError> {
  const error = await Promise.resolve().then(run).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

describe('login', () => {
  test('the right password gives a token whose session names the user until it expires, to the millisecond', async () => {
    const { accounts, clock, appended } = await service({ users: [{ email: 'ada@example.com' }] });
    const { token, user } = await accounts.login('ADA@example.com', PASSWORD, '10.0.0.1');
    expect(user.email).toBe('ada@example.com');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(appended.at(-1)).toEqual({
      t: 'session.created',
      session: { tokenHash: expect.stringMatching(/^[0-9a-f]{64}$/), userId: 'u0', createdAtMs: T0, expiresAtMs: T0 + TTL_MS },
    });
    expect(accounts.requireUser(token).id).toBe('u0');
    clock.set(T0 + TTL_MS - 1);
    expect(accounts.requireUser(token).id).toBe('u0');
    clock.set(T0 + TTL_MS);
    expect((await domainErrorOf(() => accounts.requireUser(token))).code).toBe('UNAUTHORIZED');
  });

  test('the session is found by the HMAC of the token under the secret: another secret does not know it', async () => {
    const first = await service({ users: [{ email: 'ada@example.com' }] });
    const { token } = await first.accounts.login('ada@example.com', PASSWORD, '10.0.0.1');
    const otherSecret = new AccountService(first.engine, TTL_MS, 'another-session-secret');
    expect((await domainErrorOf(() => otherSecret.requireUser(token))).message).toBe('authentication required');
    expect(first.accounts.requireUser(token).id).toBe('u0');
  });

  test('a wrong password and an unknown email get the same 401, and no session', async () => {
    const { accounts, appended } = await service({ users: [{ email: 'ada@example.com' }] });
    const recorded = appended.length;
    for (const [email, password] of [
      ['ada@example.com', 'wrong horse battery'],
      // the password of the hash an unknown email is verified against (for even timing) opens nothing
      ['nobody@example.com', 'not-a-real-password-for-timing'],
    ] as const) {
      const error = await domainErrorOf(() => accounts.login(email, password, '10.0.0.1'));
      expect(error.code).toBe('UNAUTHORIZED');
      expect(error.message).toBe('invalid email or password');
    }
    expect(appended.length).toBe(recorded);
  });

  test('past the limit a login is RATE_LIMITED with the exact Retry-After, before any password is checked', async () => {
    const { accounts } = await service({ users: [{ email: 'ada@example.com' }], limiter: { pairFailuresFree: 2, pairBackoffBaseMs: 4_500 } });
    for (let i = 0; i < 2; i++) await domainErrorOf(() => accounts.login('ada@example.com', 'wrong horse battery', '10.0.0.1'));
    const error = await domainErrorOf(() => accounts.login(' ADA@example.com', PASSWORD, '10.0.0.1'));
    expect(error.code).toBe('RATE_LIMITED');
    expect(error.message).toBe('too many failed logins; try again later');
    expect(error.headers).toEqual({ 'Retry-After': '5' });
    // another address is not slowed
    expect((await accounts.login('ada@example.com', PASSWORD, '10.0.0.2')).user.id).toBe('u0');
  });

  test("a login returns a device cookie for the user's email (however it was typed) that lets that device past a drained email bucket, at the service's clock", async () => {
    const { accounts, clock } = await service({ users: [{ email: 'ada@example.com' }], limiter: { emailBurst: 1 } });
    const { deviceCookie } = await accounts.login(' ADA@example.com', PASSWORD, '10.0.0.1');
    expect(accounts.deviceTrustMs).toBe(90 * 86_400_000);
    await domainErrorOf(() => accounts.login('ada@example.com', 'wrong horse battery', '10.9.9.9')); // a guesser takes the one token
    expect((await domainErrorOf(() => accounts.login('ada@example.com', PASSWORD, '10.0.0.1'))).code).toBe('RATE_LIMITED');
    expect((await accounts.login('Ada@Example.com', PASSWORD, '10.0.0.1', deviceCookie)).user.id).toBe('u0');
    clock.advance(accounts.deviceTrustMs); // the first cookie expires (the one just issued has more time)
    await domainErrorOf(() => accounts.login('ada@example.com', 'wrong horse battery', '10.9.9.9'));
    expect((await domainErrorOf(() => accounts.login('ada@example.com', PASSWORD, '10.0.0.1', deviceCookie))).code).toBe('RATE_LIMITED');
  });

  test('a successful login gives its attempt back, so logging in often is never limited', async () => {
    const { accounts } = await service({ users: [{ email: 'ada@example.com' }], limiter: { pairFailuresFree: 2, emailBurst: 2, addressFailuresMax: 2 } });
    for (let i = 0; i < 6; i++) expect((await accounts.login('ada@example.com', PASSWORD, '10.0.0.1')).user.id).toBe('u0');
    // six successes left nothing counted against the email or the address: a wrong password is still only wrong
    expect((await domainErrorOf(() => accounts.login('ada@example.com', 'wrong horse battery', '10.0.0.1'))).code).toBe('UNAUTHORIZED');
  });

  test(`a password longer than ${PASSWORD_CHARS_MAX} characters is refused before anything else; one of exactly that length is checked`, async () => {
    const { accounts } = await service({ users: [{ email: 'ada@example.com' }] });
    const tooLong = await domainErrorOf(() => accounts.login('ada@example.com', 'x'.repeat(PASSWORD_CHARS_MAX + 1), '10.0.0.1'));
    expect(tooLong.code).toBe('VALIDATION_ERROR');
    expect(tooLong.details).toEqual({ password: [`must be at most ${PASSWORD_CHARS_MAX} characters`] });
    expect((await domainErrorOf(() => accounts.login('ada@example.com', 'x'.repeat(PASSWORD_CHARS_MAX), '10.0.0.1'))).code).toBe('UNAUTHORIZED');
    expect(PASSWORD_CHARS_MAX).toBe(256);
  });
});

describe('logout and the current user', () => {
  test('logout ends the session; logging out an unknown or ended session records nothing', async () => {
    const { accounts, appended } = await service({ users: [{ email: 'ada@example.com' }] });
    const { token } = await accounts.login('ada@example.com', PASSWORD, '10.0.0.1');
    await accounts.logout(token);
    expect(appended.at(-1)).toEqual({ t: 'session.deleted', tokenHash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect((await domainErrorOf(() => accounts.requireUser(token))).code).toBe('UNAUTHORIZED');
    const recorded = appended.length;
    await accounts.logout(token);
    await accounts.logout('never-issued');
    expect(appended.length).toBe(recorded);
  });

  test('no token or an empty one is 401 authentication required', async () => {
    const { accounts } = await service();
    for (const token of [undefined, '']) {
      const error = await domainErrorOf(() => accounts.requireUser(token));
      expect(error.code).toBe('UNAUTHORIZED');
      expect(error.message).toBe('authentication required');
    }
  });

  test('publicUser shows id, email, admin flag and an ISO creation time, never the hash', () => {
    const user: User = { id: 'u1', email: 'ada@example.com', passwordHash: 'secret', isAdmin: true, createdAtMs: T0 };
    expect(publicUser(user)).toEqual({ id: 'u1', email: 'ada@example.com', isAdmin: true, createdAt: '2026-11-21T10:00:00.000Z' });
  });
});

describe('creating users', () => {
  test('only an admin creates users', async () => {
    const { accounts } = await service();
    const notAdmin: User = { id: 'u9', email: 'x@example.com', passwordHash: cheapHash, isAdmin: false, createdAtMs: T0 };
    const error = await domainErrorOf(() => accounts.createUser(notAdmin, 'bob@example.com', PASSWORD));
    expect(error.code).toBe('FORBIDDEN');
    expect(error.message).toBe('only an admin can create users');
  });

  test('emails and passwords are checked before hashing, with the field and the rule', async () => {
    const { accounts } = await service();
    const refused = async (email: string, password: string) => (await domainErrorOf(() => accounts.addUser(email, password, false))).details;
    for (const email of ['no-at-sign', '@example.com', 'ada@', 'a b@example.com', 'ada@exa mple.com', 'a@b@c', `${'a'.repeat(65)}@example.com`, `ada@${'e'.repeat(256)}`]) {
      expect(await refused(email, PASSWORD)).toEqual({ email: ['must be an email address'] });
    }
    expect(await refused('ada@example.com', 'x'.repeat(11))).toEqual({ password: ['must be at least 12 characters'] });
    expect(await refused('ada@example.com', 'x'.repeat(PASSWORD_CHARS_MAX + 1))).toEqual({ password: [`must be at most ${PASSWORD_CHARS_MAX} characters`] });
  });

  test('an admin creates a user at the limits of email and password, stored with an argon2id hash of that password', async () => {
    const { accounts } = await service();
    const admin: User = { id: 'a', email: 'admin@example.com', passwordHash: cheapHash, isAdmin: true, createdAtMs: T0 };
    const email = ` ${'A'.repeat(64)}@${'e'.repeat(255)} `;
    const created = await accounts.createUser(admin, email, 'twelve chars');
    expect(created.email).toBe(email.trim().toLowerCase());
    expect(created.isAdmin).toBe(false);
    expect(created.passwordHash.startsWith('$argon2id$')).toBe(true);
  });

  test('ensureAdmin: nothing when an admin exists', async () => {
    const withAdmin = await service({ users: [{ email: 'root@example.com', isAdmin: true }] });
    expect(await withAdmin.accounts.ensureAdmin('other@example.com', PASSWORD)).toBeNull();
    expect(withAdmin.engine.accounts.users.size).toBe(1);
  });

  test('ensureAdmin without an admin (users made with the CLI may exist): the configured one', async () => {
    const configured = await service({ users: [{ email: 'made-by-cli@example.com' }] });
    expect(await configured.accounts.ensureAdmin('boss@example.com', PASSWORD)).toEqual({ id: expect.any(String), email: 'boss@example.com', generatedPassword: null });
    expect(configured.engine.accounts.userByEmail('boss@example.com')?.isAdmin).toBe(true);
  });

  test('ensureAdmin without configuration: admin@localhost with a one-time password that logs in', async () => {
    const generated = await service();
    const made = await generated.accounts.ensureAdmin(null, null);
    expect(made?.email).toBe('admin@localhost');
    expect(made?.generatedPassword).toMatch(/^[A-Za-z0-9_-]{20}$/);
    const admin = generated.engine.accounts.userByEmail('admin@localhost')!;
    expect(admin.isAdmin).toBe(true);
    expect(await verifyPassword(made!.generatedPassword!, admin.passwordHash)).toBe(true);
  });
});
