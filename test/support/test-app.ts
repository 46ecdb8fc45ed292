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
const SESSION_SECRET = 'test-session-secret';

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
const noBackups = () => Promise.reject(new DomainError('SERVICE_UNAVAILABLE', 'this test app has no data directory'));

export async function testApp(options: TestAppOptions = {}) {
  const clock = new ManualClock(options.nowMs ?? T0);
  const errors: string[] = [];
  /** what LiveUpdates logs: one line per stream a client left or was cut off from */
  const streamLog: string[] = [];
  const halts: unknown[] = [];
  const engine = new Engine({
    clock,
    log: options.log ?? inMemoryLog,
    limits: { dailyEventLimit: 10_000, dedupKeysMax: 100_000, maxJobsPerConnection: 1_000_000, retentionMs: 86_400_000, ...options.limits },
    onHalt: (error) => halts.push(error),
  });
  const accounts = new AccountService(engine, 7 * 86_400_000, SESSION_SECRET, { ...LOGIN_LIMITER_DEFAULTS, ...options.loginLimiter });
  const connections = new ConnectionService(engine);
  const teams = new TeamService(engine);
  const users = new UserService(engine, 72 * 3_600_000);
  const jobActions = new JobActionService(engine, connections);
  const live = new LiveUpdates(engine, clock, {
    hub: { ringBufferEventsMax: 100, ringBufferBytesMax: 1 << 20, subscriberBufferBytesMax: 1024 * 1024, flushIntervalMs: 5, keepAliveIntervalMs: 200 },
    livenessCheckIntervalMs: 3_600_000,
    streamsPerUserMax: 3,
    resumeGraceMs: 60_000,
    log: (line) => streamLog.push(line),
    ...options.live,
  });
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
  const ssoSettings = options.sso === undefined ? null : oidcSettings(options.sso);
  const sso = ssoSettings === null ? undefined : { client: new OidcClient(ssoSettings, SESSION_SECRET), service: new SsoService(engine), groupMap: ssoSettings.groupMap };
  const app = createApp({
    engine, accounts, connections, teams, users, audit: new AuditService(engine), sso, jobActions, live, alerts, alertDelivery, taskMetrics,
    config: { cookieSecure: options.cookieSecure ?? 'auto', sessionTtlMs: 7 * 86_400_000, publicUrl: options.publicUrl ?? null, bodyTimeoutMs: options.bodyTimeoutMs ?? 30_000, trustedProxies: TrustedProxies.parse((options.trustedProxies ?? []).join(',')), inFlightPerConnection: options.inFlightPerConnection, passwordSignIn: options.passwordSignIn },
    logError: (line) => errors.push(line),
    backup: noBackups,
  });
  checkAnswersAgainstOpenApi(app);
  // as a new installation starts: the admin, and the first team with the admin as its admin
  if (options.withAdmin ?? true) await firstAdminMaker(accounts, teams, { adminEmail: ADMIN.email, adminPassword: ADMIN.password }, () => undefined)();

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

  /**
   * A user made straight in the engine (no password, so no slow hash) and a session for
   * them: the cookie a sign-in would have given. For tests about what users may do, not how
   * they sign in.
   */
  async function userWithSession(email: string, options: { isAdmin?: boolean } = {}): Promise<{ user: User; cookie: string }> {
    const user: User = { id: newId(), email: normalizeEmail(email), passwordHash: '', isAdmin: options.isAdmin ?? false, createdAtMs: clock.nowMs() };
    await engine.commit({ t: 'user.created', user });
    return { user, cookie: await sessionCookieOf(user) };
  }

  /** A new session of `user`, as the cookie header value. */
  async function sessionCookieOf(user: User): Promise<string> {
    const token = newSessionToken();
    await engine.commit(engine.accounts.decideCreateSession(user, sessionTokenHasher(SESSION_SECRET)(token), 7 * 86_400_000, clock.nowMs()));
    return `session=${token}`;
  }

  function ingest(apiKey: string, events: unknown[]) {
    return request('POST', '/api/ingest', { body: { events }, headers: { authorization: `Bearer ${apiKey}` } });
  }

  /** The same app on a loopback port, for tests that need a real peer address; stopped by the returned function. */
  function serve(): { baseUrl: string; stop: () => Promise<void> } {
    app.listen({ port: 0, hostname: '127.0.0.1' });
    return { baseUrl: `http://127.0.0.1:${app.server!.port}`, stop: async () => void (await app.stop()) };
  }

  return { app, engine, clock, serve, accounts, connections, teams, live, alerts, alertRunner: alertDelivery.runner, errors, streamLog, halts, users, request, login, createConnection, createUser, userWithSession, sessionCookieOf, ingest };
}

export type TestApp = Awaited<ReturnType<typeof testApp>>;
