/**
 * Configuration from the environment. Every variable has an embedded default so
 * `bun run start` works on a fresh machine; a bad value stops start-up with a message
 * that names the variable (a typo must never silently fall back to a default).
 */
import { availableParallelism } from 'node:os';
import { TENANT_LIMIT_DEFAULTS as TENANT, type TenantLimits } from '../actors/connection/tenant-limits.ts';
import { PAYLOAD_LIMIT_DEFAULTS as PAYLOAD, type PayloadLimits } from '../actors/ingest/job-payload.ts';
import { IN_FLIGHT_DEFAULTS, type InFlightLimits } from './http/in-flight.ts';
import { TrustedProxies } from './http/trusted-proxies.ts';
import { TASK_METRICS_DEFAULTS, type TaskMetricsSettings } from '../actors/metrics/metric-tiers.ts';
import { oidcSettings, OidcSettingsError, type OidcSettings } from './sso/oidc-settings.ts';

/** as in Redis: `always` syncs before acknowledging (group commit), `everysec` once a second, `no` leaves it to the OS */
export type FsyncPolicy = 'always' | 'everysec' | 'no';
export type CookieSecureMode = 'auto' | 'true' | 'false';
/** `auto`: JSON lines when NODE_ENV=production, readable lines otherwise */
export type LogFormatSetting = 'auto' | 'json' | 'pretty';
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /**
   * Shards the connections are spread over, each on a thread of its own with its own log in
   * DATA_DIR (docs/architecture.md, "Shards"); 1: one thread, as before shards. A change
   * between restarts moves the data into the new number of shards.
   */
  workers: number;
  adminEmail: string | null;
  adminPassword: string | null;
  dailyEventLimit: number; // 0 = unlimited
  retentionMs: number;
  /** how long a revoke or retry waits for its agent's outcome before it is withdrawn as expired unconfirmed */
  commandConfirmMs: number;
  fsync: FsyncPolicy;
  maxJobsPerConnection: number;
  cookieSecure: CookieSecureMode;
  sessionSecret: string | null; // null: generated once and kept in the data directory
  sessionTtlMs: number;
  /** how long an invitation or password reset link stays good */
  passwordLinkTtlMs: number;
  /** audit entries older than this are dropped (docs/security.md, "Audit log") */
  auditRetentionMs: number;
  /** at most this many audit entries are kept, the oldest dropped first */
  auditEntriesMax: number;
  /** single sign-on with OpenID Connect; null: off (src/sso/oidc-settings.ts) */
  oidc: OidcSettings | null;
  /** false: only single sign-on signs in (needs OIDC_ISSUER) */
  passwordSignIn: boolean;
  dedupKeysMax: number;
  snapshotLogBytesMax: number;
  snapshotIntervalMs: number;
  /** a full collection once ingest and replication have been quiet this long after a burst (src/service/memory-return.ts); 0: never */
  memoryReturnIdleMs: number;
  /** ... and only after at least this many bytes were taken in since the last one */
  memoryReturnWorkBytesMin: number;
  streamsPerUserMax: number;
  /** one tenant must never crowd out another: see actors/connection/tenant-limits.ts */
  tenantLimits: TenantLimits;
  /** caps and redaction of what jobs were called with and gave back: see actors/ingest/job-payload.ts */
  payloadLimits: PayloadLimits;
  // HTTP edge (docs/security.md, "HTTP edge")
  /** absolute base URL the service is reached at, without a trailing slash; null: `docs_url` is relative */
  publicUrl: string | null;
  /** how long a request body may take to arrive before it is cut off with a 408 */
  bodyTimeoutMs: number;
  /** requests and body bytes one connection (API key) may have in flight at once (src/http/in-flight.ts) */
  inFlightPerConnection: InFlightLimits;
  streamResumeGraceMs: number;
  streamResumeBufferBytesMax: number;
  // --- login and cross-site requests (security hardening) ---
  /** peers whose forwarded headers are believed; none by default */
  trustedProxies: TrustedProxies;
  // --- operability (docs/operations.md) ---
  /** bearer token GET /metrics requires; null: the route is off and nothing is measured */
  metricsToken: string | null;
  logFormat: LogFormatSetting;
  logLevel: LogLevel;
  /** NODE_ENV=production: what `LOG_FORMAT=auto` follows */
  production: boolean;
  // --- cluster mode (docs/cluster.md) ---
  /** NATS servers of the cluster; null: the local log in DATA_DIR (single node) */
  clusterNatsUrl: string[] | null;
  /** null: host name and port, resolved when cluster mode starts */
  clusterNodeId: string | null;
  clusterReplicas: number;
  /** partitions of the log, each with its own writer; fixed at the cluster's first start (stored in NATS) */
  clusterPartitions: number;
  /** a lease not renewed for this long may be taken over by a standby */
  clusterLeaseMs: number;
  /** how many nodes besides its writer keep each partition's state; 'all': every node keeps every partition */
  clusterStandbys: number | 'all';
  /** how often placement by size may move one partition's slot (ms); 0: partitions placed by count only */
  clusterRebalanceMs: number;
  /** where other nodes reach this node's HTTP; null: http://<HOST>:<PORT>, resolved once listening */
  clusterAdvertiseUrl: string | null;
  /** signs requests one node forwards to another (required in cluster mode) */
  clusterSecret: string | null;
  /** who answers a read of a partition's connections: any node keeping it (this one when it does), or only its writer */
  clusterReadsFrom: 'keepers' | 'writers';
  // --- alerts (docs/alerts.md) ---
  /** how often alert rules are evaluated and due webhooks sent */
  alertEvalMs: number;
  /** webhooks may reach loopback and private addresses (an intranet); the cloud metadata address stays refused */
  alertWebhookAllowPrivate: boolean;
  // --- task metrics (docs/configuration.md, "Task metrics") ---
  /** how long the minute, hour and day tiers keep their buckets, and the series cap per connection */
  taskMetrics: TaskMetricsSettings;
  /** (connection, task) pairs the task metrics' Prometheus families export at most; the rest are summed as `(other)` */
  prometheusTaskSeriesMax: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

/** How people sign in: single sign-on (src/sso/oidc-settings.ts) and whether a password still does. */
function signIn(env: Env): Pick<Config, 'oidc' | 'passwordSignIn'> {
  let oidc: OidcSettings | null;
  try {
    oidc = oidcSettings(env);
  } catch (error) {
    if (error instanceof OidcSettingsError) throw new ConfigError(error.message);
    throw error;
  }
  const passwordSignIn = oneOf(env, 'PASSWORD_SIGN_IN', 'true', ['true', 'false'] as const) === 'true';
  if (!passwordSignIn && oidc === null) throw new ConfigError('PASSWORD_SIGN_IN=false needs single sign-on (OIDC_ISSUER): nobody could sign in');
  return { oidc, passwordSignIn };
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got '${raw}'`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

/**
 * CLUSTER_STANDBYS when unset. One standby per partition makes a failover a lease plus
 * milliseconds while each node keeps about (1 + 1) / N of the connections; `all` is every
 * node a replica of everything (reads about any connection answered by any node).
 */
export const CLUSTER_STANDBYS_DEFAULT: number | 'all' = 1;
/** More standbys than this gain nothing a cluster of that size would not get from `all`. */
export const CLUSTER_STANDBYS_MAX = 8;

function standbys(env: Env, name: string): number | 'all' {
  const raw = env[name];
  if (raw === undefined || raw === '') return CLUSTER_STANDBYS_DEFAULT;
  if (raw.trim().toLowerCase() === 'all') return 'all';
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number from 0 to ${CLUSTER_STANDBYS_MAX} or 'all', got '${raw}'`);
  return integer(env, name, 0, 0, CLUSTER_STANDBYS_MAX);
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = raw.trim().toLowerCase() as T;
  if (!allowed.includes(value)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got '${raw}'`);
  return value;
}

function optionalString(env: Env, name: string): string | null {
  const raw = env[name];
  return raw === undefined || raw === '' ? null : raw;
}

/** An absolute http(s) URL without query or fragment, returned without a trailing slash. */
function publicUrl(env: Env, name: string): string | null {
  const raw = optionalString(env, name);
  if (raw === null) return null;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got '${raw}'`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new ConfigError(`${name} must be an absolute http(s) URL without credentials, query or fragment, got '${raw}'`);
  }
  return url.href.replace(/\/+$/, '');
}

/** Comma-separated key patterns of letters, digits, `_` and `-`; `none` for none. */
function keyPatterns(env: Env, name: string, fallback: readonly string[]): readonly string[] {
  const raw = optionalString(env, name);
  if (raw === null) return fallback;
  if (raw.trim().toLowerCase() === 'none') return [];
  const patterns = raw.split(',').map((each) => each.trim()).filter((each) => each !== '');
  const bad = patterns.find((pattern) => !/^[A-Za-z0-9_-]{1,64}$/.test(pattern));
  if (bad !== undefined) throw new ConfigError(`${name} must be comma-separated key patterns of letters, digits, _ and - (or none), got '${bad}'`);
  if (patterns.length === 0 || patterns.length > 100) throw new ConfigError(`${name} must name 1 to 100 key patterns (or none), got ${patterns.length}`);
  return patterns;
}

/** Comma-separated nats:// (or tls://) server URLs. */
function natsServers(env: Env, name: string): string[] | null {
  const raw = optionalString(env, name);
  if (raw === null) return null;
  const servers = raw.split(',').map((each) => each.trim()).filter((each) => each !== '');
  for (const server of servers) {
    if (!/^(nats|tls):\/\/[^\s/]+$/.test(server)) throw new ConfigError(`${name} must be comma-separated nats://host:port URLs, got '${server}'`);
  }
  if (servers.length === 0) throw new ConfigError(`${name} names no server`);
  return servers;
}

function trustedProxies(env: Env): TrustedProxies {
  try {
    return TrustedProxies.parse(env.TRUSTED_PROXIES ?? '');
  } catch (error) {
    throw new ConfigError(`TRUSTED_PROXIES must be comma-separated IP addresses or CIDRs: ${(error as Error).message}`);
  }
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const MB = 1024 * 1024;
const KIB = 1024;

/** A shard per core, up to this; more than the cores only adds threads competing for them. */
export const WORKERS_DEFAULT_MAX = 16;
export const WORKERS_MAX = 64;

/** WORKERS unset: one shard per core the process may use, at most WORKERS_DEFAULT_MAX. */
export function defaultWorkers(): number {
  return Math.max(1, Math.min(WORKERS_DEFAULT_MAX, availableParallelism()));
}

/** The tiers' retention and the series cap; a coarser tier keeps at least as long as a finer one (a read covers a range with coarse buckets inside and fine ones at its edges). */
function taskMetrics(env: Env): TaskMetricsSettings {
  const defaults = TASK_METRICS_DEFAULTS;
  const minute = integer(env, 'METRICS_MINUTE_RETENTION_HOURS', defaults.retentionMs.minute / HOUR_MS, 1, 24 * 30) * HOUR_MS;
  const hour = integer(env, 'METRICS_HOUR_RETENTION_DAYS', defaults.retentionMs.hour / DAY_MS, 1, 3 * 365) * DAY_MS;
  const day = integer(env, 'METRICS_DAY_RETENTION_DAYS', defaults.retentionMs.day / DAY_MS, 1, 10 * 365) * DAY_MS;
  if (minute > hour || hour > day) {
    throw new ConfigError('task metrics tiers must keep longer as they get coarser: METRICS_MINUTE_RETENTION_HOURS <= METRICS_HOUR_RETENTION_DAYS * 24 <= METRICS_DAY_RETENTION_DAYS * 24');
  }
  return { retentionMs: { minute, hour, day }, seriesMax: integer(env, 'METRICS_SERIES_MAX', defaults.seriesMax, 1, 100_000) };
}

/**
 * Off by default on a cluster node: a full collection stops the thread for seconds with a
 * million jobs held, and a node that stops past its lease loses its partitions.
 */
function memoryReturnIdleDefaultMs(clustered: boolean): number {
  return clustered ? 0 : 5_000;
}

export function loadConfig(env: Env = process.env): Config {
  const adminPassword = optionalString(env, 'ADMIN_PASSWORD');
  if (adminPassword !== null && adminPassword.length < 12) {
    throw new ConfigError('ADMIN_PASSWORD must be at least 12 characters');
  }
  const adminEmail = optionalString(env, 'ADMIN_EMAIL');
  if (adminEmail !== null && !/^[^\s@]+@[^\s@]+$/.test(adminEmail)) {
    throw new ConfigError(`ADMIN_EMAIL must be an email address, got '${adminEmail}'`);
  }
  const metricsToken = optionalString(env, 'METRICS_TOKEN');
  const clusterNatsUrl = natsServers(env, 'CLUSTER_NATS_URL');
  const clusterSecret = optionalString(env, 'CLUSTER_SECRET');
  // Without it a node could not tell a forward of another node from a client that writes X-Forwarded-For itself.
  if (clusterNatsUrl !== null && (clusterSecret === null || clusterSecret.length < 16)) {
    throw new ConfigError('cluster mode (CLUSTER_NATS_URL) needs CLUSTER_SECRET, the same on every node, at least 16 characters');
  }
  // A scrape token is compared in constant time, but a short one can still be guessed.
  if (metricsToken !== null && (metricsToken.length < 16 || /\s/.test(metricsToken))) {
    throw new ConfigError('METRICS_TOKEN must be at least 16 characters without spaces');
  }
  const sessionSecret = optionalString(env, 'SESSION_SECRET');
  if (sessionSecret !== null && sessionSecret.length < 16) {
    throw new ConfigError('SESSION_SECRET must be at least 16 characters');
  }
  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: optionalString(env, 'HOST') ?? '0.0.0.0',
    dataDir: optionalString(env, 'DATA_DIR') ?? './data',
    workers: integer(env, 'WORKERS', defaultWorkers(), 1, WORKERS_MAX),
    adminEmail,
    adminPassword,
    dailyEventLimit: integer(env, 'DAILY_EVENT_LIMIT', 10_000, 0, Number.MAX_SAFE_INTEGER),
    retentionMs: integer(env, 'RETENTION_HOURS', 24, 1, 24 * 365) * HOUR_MS,
    commandConfirmMs: integer(env, 'COMMAND_CONFIRM_SECONDS', 300, 1, 7 * 86_400) * 1000,
    fsync: oneOf(env, 'FSYNC', 'always', ['always', 'everysec', 'no'] as const),
    maxJobsPerConnection: integer(env, 'MAX_JOBS_PER_CONNECTION', 1_000_000, 1, 50_000_000),
    cookieSecure: oneOf(env, 'COOKIE_SECURE', 'auto', ['auto', 'true', 'false'] as const),
    sessionSecret,
    sessionTtlMs: integer(env, 'SESSION_TTL_HOURS', 24 * 7, 1, 24 * 365) * HOUR_MS,
    passwordLinkTtlMs: integer(env, 'PASSWORD_LINK_HOURS', 72, 1, 24 * 30) * HOUR_MS,
    auditRetentionMs: integer(env, 'AUDIT_RETENTION_DAYS', 90, 1, 3_650) * 24 * HOUR_MS,
    auditEntriesMax: integer(env, 'AUDIT_ENTRIES_MAX', 100_000, 100, 10_000_000),
    ...signIn(env),
    dedupKeysMax: integer(env, 'DEDUP_KEYS_MAX', 100_000, 1, 10_000_000),
    snapshotLogBytesMax: integer(env, 'SNAPSHOT_LOG_MB', 256, 1, 1_000_000) * 1024 * 1024,
    snapshotIntervalMs: integer(env, 'SNAPSHOT_INTERVAL_MINUTES', 60, 1, 24 * 60) * 60_000,
    memoryReturnIdleMs: integer(env, 'MEMORY_RETURN_IDLE_MS', memoryReturnIdleDefaultMs(clusterNatsUrl !== null), 0, 3_600_000),
    memoryReturnWorkBytesMin: integer(env, 'MEMORY_RETURN_AFTER_MB', 16, 1, 1_000_000) * 1024 * 1024,
    streamsPerUserMax: integer(env, 'STREAMS_PER_USER_MAX', 20, 1, 10_000),
    tenantLimits: tenantLimits(env),
    payloadLimits: payloadLimits(env),
    publicUrl: publicUrl(env, 'PUBLIC_URL'),
    bodyTimeoutMs: integer(env, 'BODY_TIMEOUT_SECONDS', 30, 1, 3_600) * 1000,
    inFlightPerConnection: {
      requestsMax: integer(env, 'IN_FLIGHT_REQUESTS_PER_CONNECTION', IN_FLIGHT_DEFAULTS.requestsMax, 1, 100_000),
      bytesMax: integer(env, 'IN_FLIGHT_MB_PER_CONNECTION', IN_FLIGHT_DEFAULTS.bytesMax / MB, 6, 100_000) * MB,
    },
    streamResumeGraceMs: integer(env, 'STREAM_RESUME_GRACE_SECONDS', 60, 0, 3_600) * 1000,
    streamResumeBufferBytesMax: integer(env, 'STREAM_RESUME_BUFFER_MB', 16, 1, 1_024) * 1024 * 1024,
    trustedProxies: trustedProxies(env),
    metricsToken,
    logFormat: oneOf(env, 'LOG_FORMAT', 'auto', ['auto', 'json', 'pretty'] as const),
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', LOG_LEVELS),
    production: env.NODE_ENV === 'production',
    clusterNatsUrl,
    clusterNodeId: optionalString(env, 'CLUSTER_NODE_ID'),
    clusterReplicas: integer(env, 'CLUSTER_REPLICAS', 3, 1, 5),
    clusterPartitions: integer(env, 'CLUSTER_PARTITIONS', 16, 1, 1024),
    clusterLeaseMs: integer(env, 'CLUSTER_LEASE_MS', 10_000, 200, 600_000),
    clusterStandbys: standbys(env, 'CLUSTER_STANDBYS'),
    clusterRebalanceMs: integer(env, 'CLUSTER_REBALANCE_SECONDS', 15, 0, 3_600) * 1000,
    clusterAdvertiseUrl: publicUrl(env, 'CLUSTER_ADVERTISE_URL'),
    clusterSecret,
    clusterReadsFrom: oneOf(env, 'CLUSTER_READS_FROM', 'keepers', ['keepers', 'writers'] as const),
    alertEvalMs: integer(env, 'ALERT_EVAL_SECONDS', 10, 1, 3_600) * 1000,
    alertWebhookAllowPrivate: oneOf(env, 'ALERT_WEBHOOK_ALLOW_PRIVATE', 'false', ['true', 'false'] as const) === 'true',
    taskMetrics: taskMetrics(env),
    prometheusTaskSeriesMax: integer(env, 'METRICS_PROMETHEUS_TASKS_MAX', 100, 0, 10_000),
  };
}

/** What one tenant may hold and send, so that it never crowds out another (QUEUES_PER_CONNECTION_MAX and beside it). */
function tenantLimits(env: Env): Config['tenantLimits'] {
  return {
    queuesPerConnectionMax: integer(env, 'QUEUES_PER_CONNECTION_MAX', TENANT.queuesPerConnectionMax, 1, 1_000_000),
    workersPerConnectionMax: integer(env, 'WORKERS_PER_CONNECTION_MAX', TENANT.workersPerConnectionMax, 1, 1_000_000),
    connectionMemoryBytesMax: integer(env, 'CONNECTION_MEMORY_MB', TENANT.connectionMemoryBytesMax / MB, 0, 1_000_000) * MB,
    dailyIngestBytesMax: integer(env, 'DAILY_INGEST_MB', TENANT.dailyIngestBytesMax / MB, 0, 1_000_000_000) * MB,
    clockSkewToleranceMs: integer(env, 'CLOCK_SKEW_TOLERANCE_SECONDS', TENANT.clockSkewToleranceMs / 1000, 0, 7 * 86_400) * 1000,
  };
}

/** The caps and masking of what jobs were called with (JOB_ARGS_KB and beside it). */
function payloadLimits(env: Env): Config['payloadLimits'] {
  return {
    argsBytesMax: integer(env, 'JOB_ARGS_KB', PAYLOAD.argsBytesMax / KIB, 1, 1024) * KIB,
    resultBytesMax: integer(env, 'JOB_RESULT_KB', PAYLOAD.resultBytesMax / KIB, 1, 1024) * KIB,
    // a text column holds a text of at most 8 MiB (text-column.ts)
    logBytesMax: integer(env, 'JOB_LOG_KB', PAYLOAD.logBytesMax / KIB, 1, 8 * 1000) * KIB,
    logLinesMax: integer(env, 'JOB_LOG_LINES', PAYLOAD.logLinesMax, 1, 50_000),
    redactKeys: keyPatterns(env, 'REDACT_KEYS', PAYLOAD.redactKeys),
  };
}
