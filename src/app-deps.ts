/** What the HTTP layer needs from the rest of the process. */
import type { Engine } from '../actors/engine.ts';
import type { LiveUpdates } from '../actors/live/live-updates.ts';
import type { AccountService } from '../actors/services/account-service.ts';
import type { ConnectionService } from '../actors/services/connection-service.ts';
import type { JobActionService } from '../actors/services/job-action-service.ts';
import type { TeamService } from '../actors/services/team-service.ts';
import type { UserService } from '../actors/services/user-service.ts';
import type { AuditService } from '../actors/services/audit-service.ts';
import type { GroupGrant, SsoService } from '../actors/services/sso-service.ts';
import type { OidcClient } from './sso/oidc-client.ts';
import type { AlertService } from '../actors/services/alert-service.ts';
import type { TestAttempt } from './alerts/alert-runner.ts';
import type { TaskMetricsService } from '../actors/services/task-metrics-service.ts';
import type { GuardOptions } from './alerts/webhook-guard.ts';
import type { Config } from './config.ts';
import type { BackupFile } from './backup/write-backup.ts';
import type { ServiceMetrics } from './metrics/service-metrics.ts';
import type { IngestTimings } from '../actors/services/ingest-timings.ts';
import type { ShardHealth } from './shards/shard-states.ts';

export interface AppDeps {
  engine: Engine;
  accounts: AccountService;
  connections: ConnectionService;
  teams: TeamService;
  users: UserService;
  audit: AuditService;
  jobActions: JobActionService;
  alerts: AlertService;
  /** task metrics' tables and series, and markers */
  taskMetrics: TaskMetricsService;
  /** what the alert routes need of the edge that sends webhooks (src/alerts/) */
  alertDelivery: {
    runner: { deliverNow(connectionId: string, deliveryId: string): Promise<TestAttempt> };
    /** the outbound guard a channel's URL must pass when it is created */
    guard: GuardOptions;
  };
  live: LiveUpdates;
  /** `inFlightPerConnection` absent: the defaults (in-flight.ts) */
  config: Pick<Config, 'cookieSecure' | 'sessionTtlMs' | 'publicUrl' | 'bodyTimeoutMs' | 'trustedProxies'> & Partial<Pick<Config, 'inFlightPerConnection' | 'passwordSignIn'>>;
  /** single sign-on, when OIDC_ISSUER is set (src/sso/) */
  sso?: { client: OidcClient; service: SsoService; groupMap: readonly GroupGrant[] };
  logError: (line: string) => void;
  /** Writes a consistent backup file of the running service (POST /api/admin/backup). */
  backup: () => Promise<BackupFile>;
  /**
   * With METRICS_TOKEN set: what routes report to and GET /metrics serves; absent, metrics are
   * off. `scrape`: what GET /metrics answers instead of this registry alone (a front adds its
   * shards' figures).
   */
  metrics?: { service: ServiceMetrics; token: string; scrape?: () => Promise<{ contentType: string; body: string }> };
  /** Where ingest requests spend their time (logged at shutdown); absent in tests. */
  ingestTimings?: IngestTimings;
  /** Cluster mode: this node's id, named by /api/health with its role (the owner); absent on a single node. */
  clusterNode?: string;
  /** The app of a shard (src/shards/): its list routes add what the front merges by when it asks. */
  shard?: boolean;
  /** The front of shards (WORKERS above 1): their states, which /api/health reports; healthy only when all are ready. */
  shards?: { health(): Promise<ShardHealth[]> };
}
