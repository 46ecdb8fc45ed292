/**
 * The configuration table (docs/configuration.md) is what an operator relies on: every default it
 * states must be the one the code applies, and every variable the code reads must be in
 * it. The table is parsed from docs/configuration.md, so changing a default in either place alone
 * fails here.
 */
import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../actors/clock.ts';
import { Engine, inMemoryLog } from '../../actors/engine.ts';
import { AccountService } from '../../actors/services/account-service.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { OIDC_GROUPS_CLAIM_DEFAULT, OIDC_SCOPES_DEFAULT } from '../../src/sso/oidc-settings.ts';

const REPO_ROOT = join(import.meta.dir, '..', '..');
const HOUR_MS = 3_600_000;
const MIB = 1024 * 1024;

/** Rows of the table in docs/configuration.md: variable -> the Default cell. */
function documentedDefaults(): Map<string, string> {
  const table = readFileSync(join(REPO_ROOT, 'docs', 'configuration.md'), 'utf8');
  const rows = new Map<string, string>();
  for (const match of table.matchAll(/^\| `([A-Z_]+)` \| ([^|]+) \|/gm)) rows.set(match[1]!, match[2]!.trim());
  return rows;
}

/** The value loadConfig({}) must hold for a variable, in the unit the table states it in. */
const READ_AS: Record<string, (config: Config) => unknown> = {
  PORT: (config) => config.port,
  ALERT_EVAL_SECONDS: (config) => config.alertEvalMs / 1000,
  ALERT_WEBHOOK_ALLOW_PRIVATE: (config) => String(config.alertWebhookAllowPrivate),
  HOST: (config) => config.host,
  DATA_DIR: (config) => config.dataDir,
  DAILY_EVENT_LIMIT: (config) => config.dailyEventLimit,
  RETENTION_HOURS: (config) => config.retentionMs / HOUR_MS,
  COMMAND_CONFIRM_SECONDS: (config) => config.commandConfirmMs / 1000,
  FSYNC: (config) => config.fsync,
  MAX_JOBS_PER_CONNECTION: (config) => config.maxJobsPerConnection,
  COOKIE_SECURE: (config) => config.cookieSecure,
  SESSION_TTL_HOURS: (config) => config.sessionTtlMs / HOUR_MS,
  PASSWORD_LINK_HOURS: (config) => config.passwordLinkTtlMs / HOUR_MS,
  AUDIT_RETENTION_DAYS: (config) => config.auditRetentionMs / (24 * HOUR_MS),
  AUDIT_ENTRIES_MAX: (config) => config.auditEntriesMax,
  PASSWORD_SIGN_IN: (config) => String(config.passwordSignIn),
  OIDC_GROUPS_CLAIM: () => OIDC_GROUPS_CLAIM_DEFAULT,
  OIDC_SCOPES: () => OIDC_SCOPES_DEFAULT,
  OIDC_ALLOW_HTTP: () => 'false',
  DEDUP_KEYS_MAX: (config) => config.dedupKeysMax,
  SNAPSHOT_LOG_MB: (config) => config.snapshotLogBytesMax / MIB,
  SNAPSHOT_INTERVAL_MINUTES: (config) => config.snapshotIntervalMs / 60_000,
  MEMORY_RETURN_IDLE_MS: (config) => config.memoryReturnIdleMs,
  MEMORY_RETURN_AFTER_MB: (config) => config.memoryReturnWorkBytesMin / MIB,
  STREAMS_PER_USER_MAX: (config) => config.streamsPerUserMax,
  BODY_TIMEOUT_SECONDS: (config) => config.bodyTimeoutMs / 1000,
  IN_FLIGHT_REQUESTS_PER_CONNECTION: (config) => config.inFlightPerConnection.requestsMax,
  IN_FLIGHT_MB_PER_CONNECTION: (config) => config.inFlightPerConnection.bytesMax / MIB,
  QUEUES_PER_CONNECTION_MAX: (config) => config.tenantLimits.queuesPerConnectionMax,
  WORKERS_PER_CONNECTION_MAX: (config) => config.tenantLimits.workersPerConnectionMax,
  CONNECTION_MEMORY_MB: (config) => config.tenantLimits.connectionMemoryBytesMax / MIB,
  DAILY_INGEST_MB: (config) => config.tenantLimits.dailyIngestBytesMax / MIB,
  CLOCK_SKEW_TOLERANCE_SECONDS: (config) => config.tenantLimits.clockSkewToleranceMs / 1000,
  JOB_ARGS_KB: (config) => config.payloadLimits.argsBytesMax / 1024,
  JOB_RESULT_KB: (config) => config.payloadLimits.resultBytesMax / 1024,
  JOB_LOG_KB: (config) => config.payloadLimits.logBytesMax / 1024,
  JOB_LOG_LINES: (config) => config.payloadLimits.logLinesMax,
  REDACT_KEYS: (config) => config.payloadLimits.redactKeys.join(','),
  STREAM_RESUME_BUFFER_MB: (config) => config.streamResumeBufferBytesMax / MIB,
  STREAM_RESUME_GRACE_SECONDS: (config) => config.streamResumeGraceMs / 1000,
  LOG_FORMAT: (config) => config.logFormat,
  LOG_LEVEL: (config) => config.logLevel,
  CLUSTER_REPLICAS: (config) => config.clusterReplicas,
  CLUSTER_LEASE_MS: (config) => config.clusterLeaseMs,
  CLUSTER_STANDBYS: (config) => config.clusterStandbys,
  CLUSTER_REBALANCE_SECONDS: (config) => config.clusterRebalanceMs / 1000,
  CLUSTER_PARTITIONS: (config) => config.clusterPartitions,
  CLUSTER_READS_FROM: (config) => config.clusterReadsFrom,
  METRICS_MINUTE_RETENTION_HOURS: (config) => config.taskMetrics.retentionMs.minute / HOUR_MS,
  METRICS_HOUR_RETENTION_DAYS: (config) => config.taskMetrics.retentionMs.hour / (24 * HOUR_MS),
  METRICS_DAY_RETENTION_DAYS: (config) => config.taskMetrics.retentionMs.day / (24 * HOUR_MS),
  METRICS_SERIES_MAX: (config) => config.taskMetrics.seriesMax,
  METRICS_PROMETHEUS_TASKS_MAX: (config) => config.prometheusTaskSeriesMax,
};

/** Defaults that are not a plain value in the config: null there, and applied (or generated) later, or the machine's. */
const APPLIED_ELSEWHERE: Record<string, (config: Config) => unknown> = {
  WORKERS: (config) => config.workers,
  ADMIN_EMAIL: (config) => config.adminEmail,
  ADMIN_PASSWORD: (config) => config.adminPassword,
  SESSION_SECRET: (config) => config.sessionSecret,
  PUBLIC_URL: (config) => config.publicUrl,
  TRUSTED_PROXIES: (config) => config.trustedProxies,
  METRICS_TOKEN: (config) => config.metricsToken,
  CLUSTER_NATS_URL: (config) => config.clusterNatsUrl,
  CLUSTER_NODE_ID: (config) => config.clusterNodeId,
  CLUSTER_SECRET: (config) => config.clusterSecret,
  CLUSTER_ADVERTISE_URL: (config) => config.clusterAdvertiseUrl,
  OIDC_ISSUER: (config) => config.oidc,
  OIDC_CLIENT_ID: (config) => config.oidc,
  OIDC_CLIENT_SECRET: (config) => config.oidc,
  OIDC_GROUP_MAP: (config) => config.oidc,
};

function asValue(cell: string): string | number {
  const literal = cell.match(/^`([^`]*)`$/)?.[1];
  if (literal === undefined) throw new Error(`default cell ${cell} is not one literal`);
  return /^\d+$/.test(literal) ? Number(literal) : literal;
}

describe('the documented configuration table', () => {
  const documented = documentedDefaults();
  const defaults = loadConfig({});

  test('the table was found and lists every variable the code reads', () => {
    const source = readFileSync(join(REPO_ROOT, 'src', 'config.ts'), 'utf8');
    const read = [...source.matchAll(/\(env, '([A-Z_]+)'/g)].map((match) => match[1]!);
    expect(read.length).toBeGreaterThan(10);
    expect(read.filter((name) => !documented.has(name))).toEqual([]);
  });

  test('every documented variable is one this test knows how to check', () => {
    const unknown = [...documented.keys()].filter((name) => !(name in READ_AS) && !(name in APPLIED_ELSEWHERE));
    expect(unknown).toEqual([]); // a new row: add how its default is read to READ_AS above
  });

  for (const [name, readAs] of Object.entries(READ_AS)) {
    test(`${name}: the documented default is the one applied`, () => {
      const cell = documented.get(name);
      expect(cell).toBeDefined();
      expect(readAs(defaults)).toBe(asValue(cell!));
    });
  }

  test("WORKERS: unset means the machine's cores, at most 16, as documented", () => {
    expect(documented.get('WORKERS')).toBe("the machine's cores, at most 16");
    expect(APPLIED_ELSEWHERE.WORKERS!(defaults)).toBe(Math.min(16, availableParallelism()));
  });

  test('ADMIN_PASSWORD and SESSION_SECRET: unset means generated (null in the config), as documented', () => {
    for (const name of ['ADMIN_PASSWORD', 'SESSION_SECRET']) {
      expect(documented.get(name)).toContain('generated');
      expect(APPLIED_ELSEWHERE[name]!(defaults)).toBeNull();
    }
  });

  test('METRICS_TOKEN: unset means metrics off, as documented', () => {
    expect(documented.get('METRICS_TOKEN')).toContain('metrics off');
    expect(APPLIED_ELSEWHERE.METRICS_TOKEN!(defaults)).toBeNull();
  });

  test('PUBLIC_URL and TRUSTED_PROXIES: unset means none, as documented', () => {
    expect(documented.get('PUBLIC_URL')).toBe('unset');
    expect(APPLIED_ELSEWHERE.PUBLIC_URL!(defaults)).toBeNull();
    expect(documented.get('TRUSTED_PROXIES')).toContain('trust none');
    expect(defaults.trustedProxies.entries).toEqual([]);
  });

  test('CLUSTER_NATS_URL and CLUSTER_NODE_ID: unset means a single node, and a node id made at start', () => {
    expect(documented.get('CLUSTER_NATS_URL')).toBe('unset');
    expect(APPLIED_ELSEWHERE.CLUSTER_NATS_URL!(defaults)).toBeNull();
    expect(documented.get('CLUSTER_NODE_ID')).toContain('host name');
    expect(APPLIED_ELSEWHERE.CLUSTER_NODE_ID!(defaults)).toBeNull();
  });

  test('CLUSTER_SECRET and CLUSTER_ADVERTISE_URL: none by default; required, and made from HOST and PORT, in cluster mode', () => {
    expect(documented.get('CLUSTER_SECRET')).toContain('required in cluster mode');
    expect(APPLIED_ELSEWHERE.CLUSTER_SECRET!(defaults)).toBeNull();
    expect(documented.get('CLUSTER_ADVERTISE_URL')).toContain('http://<HOST>:<PORT>');
    expect(APPLIED_ELSEWHERE.CLUSTER_ADVERTISE_URL!(defaults)).toBeNull();
  });

  test('ADMIN_EMAIL: unset, the first admin is the documented address', async () => {
    expect(APPLIED_ELSEWHERE.ADMIN_EMAIL!(defaults)).toBeNull();
    const engine = new Engine({
      clock: new ManualClock(Date.parse('2026-11-21T10:00:00Z')),
      log: inMemoryLog,
      limits: { dailyEventLimit: 0, dedupKeysMax: 10, maxJobsPerConnection: 10, retentionMs: HOUR_MS },
    });
    const accounts = new AccountService(engine, HOUR_MS, 'sixteen-characters');
    const created = await accounts.ensureAdmin(null, 'a password of twelve');
    expect(created?.email).toBe(asValue(documented.get('ADMIN_EMAIL')!) as string);
  });
});
