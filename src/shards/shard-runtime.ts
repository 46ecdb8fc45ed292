/**
 * What a shard runs once its engine has recovered: the same services and application as a
 * single node (src/app.ts) over an engine that keeps only the shard's connections, with the
 * live stream's feed sending its events to the front (remote-live-sink.ts). The worker
 * thread (shard-worker.ts) and the test app's in-process shards build it alike; only where
 * the log lives and which timers run differ.
 */
import type { SnapshotChunk } from '../../actors/engine-snapshot.ts';
import type { AuditLimits } from '../../actors/audit/audit-log.ts';
import type { Clock } from '../../actors/clock.ts';
import type { ConnectionLimits } from '../../actors/connection/connection-actor.ts';
import { DomainError } from '../../actors/domain-error.ts';
import { Engine, type EngineRecord, type RecordLog } from '../../actors/engine.ts';
import { LiveFeed } from '../../actors/live/live-feed.ts';
import { LiveUpdates, type LiveUpdatesOptions } from '../../actors/live/live-updates.ts';
import type { LoginLimiterOptions } from '../../actors/accounts/login-limiter.ts';
import { AccountService } from '../../actors/services/account-service.ts';
import { AlertService } from '../../actors/services/alert-service.ts';
import { AuditService } from '../../actors/services/audit-service.ts';
import { TaskMetricsService } from '../../actors/services/task-metrics-service.ts';
import { TeamService } from '../../actors/services/team-service.ts';
import { UserService } from '../../actors/services/user-service.ts';
import { ConnectionService } from '../../actors/services/connection-service.ts';
import { JobActionService } from '../../actors/services/job-action-service.ts';
import type { IngestTimings } from '../../actors/services/ingest-timings.ts';
import { partitionOf } from '../../actors/partition-of.ts';
import { createAlertEdge, type AlertEdge, type AlertEdgeOptions } from '../alerts/alert-edge.ts';
import type { AppDeps } from '../app-deps.ts';
import { answerLocate } from '../http/write-partition.ts';
import { createApp, type App } from '../app.ts';
import type { LogLine } from '../logging/log-line.ts';
import type { ServiceMetrics } from '../metrics/service-metrics.ts';
import { NOT_OBSERVED } from '../metrics/service-observer.ts';
import { RemoteLiveSink } from './remote-live-sink.ts';
import type { ShardRuntime } from './shard-host.ts';
import type { FromShard, ShardCall, ShardRecoverySummary } from './shard-protocol.ts';

/** Which shard this is: the connections whose partition of `shards` is `index`. */
export interface ShardIdentity {
  index: number;
  shards: number;
}

export function shardOf(connectionId: string, shards: number): number {
  return partitionOf(connectionId, shards);
}

export interface ShardEngineOptions extends ShardIdentity {
  clock: Clock;
  log: RecordLog;
  limits: ConnectionLimits;
  audit?: AuditLimits;
  onHalt: (error: unknown) => void;
  onListenerError?: (error: unknown) => void;
}

/**
 * The shard's engine with the front's accounts restored: every connection the accounts know
 * that the shard keeps has an (empty) actor. The caller then replays the shard's own log
 * through `restorer` and `engine.evolve` and calls `restorer.reconcileWithAccounts()`, which
 * drops the actors of connections deleted since its snapshot.
 */
export function shardEngine(options: ShardEngineOptions, accounts: SnapshotChunk[]) {
  const { index, shards } = options;
  const engine = new Engine({
    clock: options.clock,
    log: options.log,
    limits: options.limits,
    audit: options.audit,
    holds: (connectionId) => shardOf(connectionId, shards) === index,
    onHalt: options.onHalt,
    onListenerError: options.onListenerError,
  });
  const restorer = engine.restorer();
  for (const chunk of accounts) restorer.restore(chunk);
  restorer.reconcileWithAccounts({ drop: false });
  return { engine, restorer };
}

export interface ShardAppOptions {
  engine: Engine;
  clock: Clock;
  send: (message: FromShard) => void;
  sessionTtlMs: number;
  sessionSecret: string;
  /** PASSWORD_LINK_TTL_HOURS in ms (the users' routes are the front's; a shard's app has them all the same) */
  passwordLinkTtlMs: number;
  loginLimiter?: LoginLimiterOptions;
  config: AppDeps['config'];
  alerts: Pick<AlertEdgeOptions, 'config' | 'resolve' | 'send' | 'observer' | 'runnerLimits'>;
  live: Pick<LiveUpdatesOptions, 'hub' | 'livenessCheckIntervalMs' | 'streamsPerUserMax' | 'resumeGraceMs'>;
  log: LogLine;
  logError: (line: string) => void;
  metrics?: { service: ServiceMetrics; token: string };
  ingestTimings?: IngestTimings;
}

export interface ShardApp {
  app: App;
  alerts: AlertService;
  alertDelivery: AlertEdge;
  connections: ConnectionService;
  feed: LiveFeed;
  sink: RemoteLiveSink;
}

/** A shard's stream hubs are the front's: its own LiveUpdates is never subscribed, and needs no feed. */
const NO_REMOTE_FEED = { watch: async () => undefined, unwatch: () => undefined, announceOfflineWorkers: () => undefined };

export function shardApp(options: ShardAppOptions): ShardApp {
  const { engine, clock } = options;
  const accounts = new AccountService(engine, options.sessionTtlMs, options.sessionSecret, options.loginLimiter);
  const connections = new ConnectionService(engine);
  const jobActions = new JobActionService(engine, connections);
  const sink = new RemoteLiveSink(options.send);
  const feed = new LiveFeed(engine, clock, sink);
  const live = new LiveUpdates(engine, clock, { ...options.live, remoteFeed: NO_REMOTE_FEED });
  const alerts = new AlertService(engine, options.config.publicUrl);
  const alertDelivery = createAlertEdge({
    engine,
    alerts,
    config: options.alerts.config,
    observer: options.alerts.observer ?? options.metrics?.service ?? NOT_OBSERVED,
    log: options.log,
    resolve: options.alerts.resolve,
    send: options.alerts.send,
    runnerLimits: options.alerts.runnerLimits,
  });
  const app = createApp({
    engine,
    accounts,
    connections,
    teams: new TeamService(engine),
    users: new UserService(engine, options.passwordLinkTtlMs),
    audit: new AuditService(engine),
    taskMetrics: new TaskMetricsService(engine, connections),
    jobActions,
    live,
    alerts,
    alertDelivery,
    config: options.config,
    logError: options.logError,
    backup: () => Promise.reject(new DomainError('SERVICE_UNAVAILABLE', 'a backup is taken by the front, not by a shard')),
    metrics: options.metrics,
    ingestTimings: options.ingestTimings,
    shard: true,
  });
  return { app, alerts, alertDelivery, connections, feed, sink };
}

/** The runtime the host drives, from a shard's app and what its calls do. */
export function shardRuntime(
  engine: Engine,
  parts: ShardApp,
  recovery: ShardRecoverySummary,
  calls: (call: ShardCall) => Promise<unknown>,
  livenessCheckIntervalMs: number,
): ShardRuntime & { stopTimers(): void } {
  const offline = setInterval(() => parts.feed.announceOfflineWorkers(parts.sink.wantedConnectionIds()), livenessCheckIntervalMs);
  offline.unref();
  return {
    recovery,
    handle: (request) => parts.app.handle(request),
    applyAccounts: (record: EngineRecord) => engine.applyReplicated(record),
    watch: (connectionIds, ack) => parts.sink.watch(connectionIds, ack),
    unwatch: (connectionId, graceUntilMs) => parts.sink.unwatch(connectionId, graceUntilMs),
    announceOfflineWorkers: () => parts.feed.announceOfflineWorkers(parts.sink.wantedConnectionIds()),
    call: (call) => {
      if (call.what === 'health') return Promise.resolve({ halted: engine.halted });
      if (call.what === 'locate' || call.what === 'locateJobs') return Promise.resolve(answerLocate(engine, call));
      return calls(call);
    },
    stopTimers: () => clearInterval(offline),
  };
}
