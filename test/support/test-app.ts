/**
 * A whole application in memory for route tests: a manual clock, an in-memory log
 * (or one the test controls), and helpers that log in and create connections through
 * the HTTP routes themselves, exercised with `app.handle(new Request(...))`. Every answer
 * is checked against the app's OpenAPI document (openapi-conformance.ts).
 */
import { ManualClock } from '../../actors/clock.ts';
import { DomainError } from '../../actors/domain-error.ts';
import { Engine, inMemoryLog, type RecordLog } from '../../actors/engine.ts';
import { AccountService } from '../../actors/services/account-service.ts';
import { ConnectionService } from '../../actors/services/connection-service.ts';
import { TeamService } from '../../actors/services/team-service.ts';
import { UserService } from '../../actors/services/user-service.ts';
import { AuditService } from '../../actors/services/audit-service.ts';
import { SsoService } from '../../actors/services/sso-service.ts';
import { OidcClient } from '../../src/sso/oidc-client.ts';
import { oidcSettings } from '../../src/sso/oidc-settings.ts';
import { firstAdminMaker } from '../../src/service/admin-bootstrap.ts';
import { JobActionService } from '../../actors/services/job-action-service.ts';
import { AlertService } from '../../actors/services/alert-service.ts';
import { TaskMetricsService } from '../../actors/services/task-metrics-service.ts';
import { createAlertEdge, type AlertEdgeOptions } from '../../src/alerts/alert-edge.ts';
import { NOT_OBSERVED } from '../../src/metrics/service-observer.ts';
import { LiveUpdates, type LiveUpdatesOptions } from '../../actors/live/live-updates.ts';
import { createApp } from '../../src/app.ts';
import { checkAnswersAgainstOpenApi } from './openapi-conformance.ts';
import { TrustedProxies } from '../../src/http/trusted-proxies.ts';
import type { ConnectionLimits } from '../../actors/connection/connection-actor.ts';
import { LOGIN_LIMITER_DEFAULTS, type LoginLimiterOptions } from '../../actors/accounts/login-limiter.ts';
import type { User } from '../../actors/accounts/account-records.ts';
import { newSessionToken, sessionTokenHasher } from '../../actors/accounts/secrets.ts';
import { normalizeEmail } from '../../actors/accounts/accounts-actor.ts';
import { newId } from '../../actors/ids.ts';

export const BASE = 'http://localhost:3000';
export const ADMIN = { email: 'admin@example.com', password: 'correct horse battery' };
export const T0 = Date.parse('2026-11-21T10:00:00.000Z');

export interface TestAppOptions {
  limits?: Partial<ConnectionLimits>;
  log?: RecordLog;
  nowMs?: number;
  live?: Partial<LiveUpdatesOptions>;
  /** PUBLIC_URL; default none (relative `docs_url`) */
  publicUrl?: string | null;
  /** BODY_TIMEOUT_SECONDS in ms; default 30 s */
  bodyTimeoutMs?: number;
  loginLimiter?: Partial<LoginLimiterOptions>;
  /** TRUSTED_PROXIES, parsed */
  trustedProxies?: string[];
  /** COOKIE_SECURE; default auto */
  cookieSecure?: 'auto' | 'true' | 'false';
  /** false: no ADMIN user, which saves its argon2id hash (about a second on a busy machine) */
  withAdmin?: boolean;
  /** the alerting edge: ALERT_WEBHOOK_ALLOW_PRIVATE (default false), a resolver or sender in place of DNS and HTTP */
  alerts?: { allowPrivate?: boolean } & Partial<Pick<AlertEdgeOptions, 'resolve' | 'send' | 'observer' | 'runnerLimits'>>;
  /** IN_FLIGHT_REQUESTS_PER_CONNECTION and IN_FLIGHT_MB_PER_CONNECTION (in bytes); default the service's defaults */
  inFlightPerConnection?: { requestsMax: number; bytesMax: number };
  /** single sign-on: the OIDC_* variables as the environment would give them; none by default */
  sso?: Record<string, string>;
  /** PASSWORD_SIGN_IN; default true */
  passwordSignIn?: boolean;
}

/** The in-memory app has no data directory to back up; backups are tested on a real service. */
export const noBackups = () => Promise.reject(new DomainError('SERVICE_UNAVAILABLE', 'this test app has no data directory'));

/** The test app's defaults beside what a test sets. */
export const TEST_LIMITS: ConnectionLimits = { dailyEventLimit: 10_000, dedupKeysMax: 100_000, maxJobsPerConnection: 1_000_000, retentionMs: 86_400_000 } as ConnectionLimits;
export const TEST_LIVE: Omit<LiveUpdatesOptions, 'remoteFeed'> = {
  hub: { ringBufferEventsMax: 100, ringBufferBytesMax: 1 << 20, subscriberBufferBytesMax: 1024 * 1024, flushIntervalMs: 5, keepAliveIntervalMs: 200 },
  livenessCheckIntervalMs: 3_600_000,
  streamsPerUserMax: 3,
  resumeGraceMs: 60_000,
};
export const TEST_SESSION = { ttlMs: 7 * 86_400_000, secret: 'test-session-secret' };
/** how long an invitation's password link lives in the tests */
export const TEST_INVITE_TTL_MS = 72 * 3_600_000;

/**
 * The app of a test: a single engine, or with WORKERS above 1 (as the service reads it) the
 * connections spread over that many shards in this thread (sharded-test-app.ts), so every
 * route test runs against either; `npm test` runs the route folders both ways.
 */
export async function testApp(options: TestAppOptions = {}) {
  const shards = testShardCount();
  if (shards > 1) return (await import('./sharded-test-app.ts')).shardedTestApp(options, shards) as unknown as Promise<SingleTestApp>;
  return singleTestApp(options);
}

/** WORKERS from the environment, as the service reads it; 1 when unset. */
export function testShardCount(): number {
  const workers = Number(process.env.WORKERS ?? '1');
  return Number.isInteger(workers) && workers > 1 ? workers : 1;
}

type SingleTestApp = Awaited<ReturnType<typeof singleTestApp>>;

export async function singleTestApp(options: TestAppOptions = {}) {
  const clock = new ManualClock(options.nowMs ?? T0);
  const errors: string[] = [];
  /** what LiveUpdates logs: one line per stream a client left or was cut off from */
  const streamLog: string[] = [];
  const halts: unknown[] = [];
  const engine = new Engine({
    clock,
    log: options.log ?? inMemoryLog,
    limits: { ...TEST_LIMITS, ...options.limits },
    onHalt: (error) => halts.push(error),
  });
  const accounts = new AccountService(engine, TEST_SESSION.ttlMs, TEST_SESSION.secret, { ...LOGIN_LIMITER_DEFAULTS, ...options.loginLimiter });
  const connections = new ConnectionService(engine);
  const teams = new TeamService(engine);
  const users = new UserService(engine, TEST_INVITE_TTL_MS);
  const jobActions = new JobActionService(engine, connections);
  const live = new LiveUpdates(engine, clock, { ...TEST_LIVE, log: (line) => streamLog.push(line), ...options.live });
  const alerts = new AlertService(engine, options.publicUrl ?? null);
  const taskMetrics = new TaskMetricsService(engine, connections);
  const alertDelivery = createAlertEdge({
    engine,
    alerts,
    config: { alertEvalMs: 10_000, alertWebhookAllowPrivate: options.alerts?.allowPrivate ?? false, publicUrl: options.publicUrl ?? null },
    observer: options.alerts?.observer ?? NOT_OBSERVED,
    log: (line) => errors.push(line),
    resolve: options.alerts?.resolve,
    send: options.alerts?.send,
    runnerLimits: options.alerts?.runnerLimits,
  });
  const app = createApp({
    engine, accounts, connections, teams, users, audit: new AuditService(engine), sso: testSso(options, engine), jobActions, live, alerts, alertDelivery, taskMetrics,
    config: testAppConfig(options),
    logError: (line) => errors.push(line),
    backup: noBackups,
  });
  checkAnswersAgainstOpenApi(app);
  if (options.withAdmin ?? true) await firstTestAdmin(accounts, teams);
  const client = testClient(app);

  /** The same app on a loopback port, for tests that need a real peer address; stopped by the returned function. */
  function serve(): { baseUrl: string; stop: () => Promise<void> } {
    app.listen({ port: 0, hostname: '127.0.0.1' });
    return { baseUrl: `http://127.0.0.1:${app.server!.port}`, stop: async () => void (await app.stop()) };
  }

  return { app, engine, clock, serve, accounts, connections, teams, users, live, alerts, alertRunner: alertDelivery.runner, errors, streamLog, halts, ...client, ...sessionHelpers(engine, clock) };
}

export function testAppConfig(options: TestAppOptions) {
  return {
    cookieSecure: options.cookieSecure ?? 'auto',
    sessionTtlMs: TEST_SESSION.ttlMs,
    publicUrl: options.publicUrl ?? null,
    bodyTimeoutMs: options.bodyTimeoutMs ?? 30_000,
    trustedProxies: TrustedProxies.parse((options.trustedProxies ?? []).join(',')),
    inFlightPerConnection: options.inFlightPerConnection,
    passwordSignIn: options.passwordSignIn,
  };
}

/** Single sign-on as the test asks for it (OIDC_* variables), over the engine of the accounts. */
export function testSso(options: TestAppOptions, engine: Engine) {
  const settings = options.sso === undefined ? null : oidcSettings(options.sso);
  return settings === null ? undefined : { client: new OidcClient(settings, TEST_SESSION.secret), service: new SsoService(engine), groupMap: settings.groupMap };
}

/** As a new installation starts: the admin, and the first team with the admin as its admin. */
export function firstTestAdmin(accounts: AccountService, teams: TeamService): Promise<void> {
  return firstAdminMaker(accounts, teams, { adminEmail: ADMIN.email, adminPassword: ADMIN.password }, () => undefined)();
}

/** Users and sessions made straight in the engine's accounts, for tests about what users may do, not how they sign in. */
export function sessionHelpers(engine: Pick<Engine, 'commit' | 'accounts'>, clock: { nowMs(): number }) {
  /**
   * A user made straight in the engine (no password, so no slow hash) and a session for
   * them: the cookie a sign-in would have given.
   */
  async function userWithSession(email: string, options: { isAdmin?: boolean } = {}): Promise<{ user: User; cookie: string }> {
    const user: User = { id: newId(), email: normalizeEmail(email), passwordHash: '', isAdmin: options.isAdmin ?? false, createdAtMs: clock.nowMs() };
    await engine.commit({ t: 'user.created', user });
    return { user, cookie: await sessionCookieOf(user) };
  }

  /** A new session of `user`, as the cookie header value. */
  async function sessionCookieOf(user: User): Promise<string> {
    const token = newSessionToken();
    await engine.commit(engine.accounts.decideCreateSession(user, sessionTokenHasher(TEST_SESSION.secret)(token), TEST_SESSION.ttlMs, clock.nowMs()));
    return `session=${token}`;
  }

  return { userWithSession, sessionCookieOf };
}

/** What a test does through the routes: requests, logins, users, connections, ingest. */
export function testClient(app: { handle(request: Request): Promise<Response> }) {
  async function request(method: string, path: string, init: { body?: unknown; headers?: Record<string, string>; rawBody?: string } = {}) {
    const headers: Record<string, string> = { ...init.headers };
    let body: string | undefined = init.rawBody;
    if (init.body !== undefined) {
      body = JSON.stringify(init.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await app.handle(new Request(BASE + path, { method, headers, body }));
    const text = await response.text();
    let json: any = null;
    try {
      json = text === '' ? null : JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: response.status, json, headers: response.headers, text };
  }

  /** Logs in and returns the cookie header value. */
  async function login(email = ADMIN.email, password = ADMIN.password): Promise<string> {
    const response = await app.handle(
      new Request(BASE + '/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) }),
    );
    if (response.status !== 200) throw new Error(`login failed: ${response.status} ${await response.text()}`);
    const setCookie = response.headers.get('set-cookie') ?? '';
    return setCookie.split(';')[0]!;
  }

  async function createConnection(cookie: string, name: string): Promise<{ id: string; apiKey: string }> {
    const created = await request('POST', '/api/connections', { body: { name }, headers: { cookie } });
    if (created.status !== 201) throw new Error(`create connection failed: ${created.status} ${created.text}`);
    return { id: created.json.connection.id, apiKey: created.json.apiKey };
  }

  /**
   * Creates a user (as the admin whose cookie is given) and logs them in. By default the
   * user also gets a team of their own, named after their email, as its admin (as every
   * user from before teams did), so that what they create is theirs alone; `team: false`
   * leaves them in no team.
   */
  async function createUser(adminCookie: string, email: string, password = 'another long password', options: { team?: boolean } = {}): Promise<string> {
    const created = await request('POST', '/api/users', { body: { email, password }, headers: { cookie: adminCookie } });
    if (created.status !== 201) throw new Error(`create user failed: ${created.status} ${created.text}`);
    if (options.team ?? true) {
      const team = await request('POST', '/api/teams', { body: { name: email }, headers: { cookie: adminCookie } });
      if (team.status !== 201) throw new Error(`create team failed: ${team.status} ${team.text}`);
      const member = await request('POST', `/api/teams/${team.json.team.id}/members`, { body: { email, role: 'admin' }, headers: { cookie: adminCookie } });
      if (member.status !== 201) throw new Error(`add member failed: ${member.status} ${member.text}`);
    }
    return login(email, password);
  }

  function ingest(apiKey: string, events: unknown[]) {
    return request('POST', '/api/ingest', { body: { events }, headers: { authorization: `Bearer ${apiKey}` } });
  }

  return { request, login, createConnection, createUser, ingest };
}

export type TestApp = Awaited<ReturnType<typeof testApp>>;
