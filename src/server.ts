/**
 * The running service: open the data directory, make sure an admin exists, serve HTTP,
 * take snapshots when the log grows or time passes, run retention, and shut down cleanly
 * (stop accepting, snapshot, sync, unlock) on SIGTERM/SIGINT. Its parts are in src/service/:
 * the snapshot schedule, the retention timer, the first admin, the backup, and the one place
 * where a single node and a cluster node differ (service-mode.ts).
 */
import { AccountService } from '../actors/services/account-service.ts';
import { ConnectionService } from '../actors/services/connection-service.ts';
import { JobActionService } from '../actors/services/job-action-service.ts';
import { AlertService } from '../actors/services/alert-service.ts';
import { createAlertEdge } from './alerts/alert-edge.ts';
import { LiveUpdates } from '../actors/live/live-updates.ts';
import { systemClock } from '../actors/clock.ts';
import { LIVE_UPDATES_DEFAULTS } from './live-defaults.ts';
import { createApp } from './app.ts';
import type { Config } from './config.ts';
import { openEngine, type OpenedEngine } from './open-engine.ts';
import { clearBackupStaging } from './backup/write-backup.ts';
import type { LogLine } from './logging/log-line.ts';
import { NOT_OBSERVED } from './metrics/service-observer.ts';
import { IngestTimings } from '../actors/services/ingest-timings.ts';
import { observeAll } from '../persistence/log-writer.ts';
import { serviceModeFor } from './service/service-mode.ts';
import { SnapshotSchedule } from './service/snapshot-schedule.ts';
import { startRetentionTimer } from './service/retention-timer.ts';
import { firstAdminMaker } from './service/admin-bootstrap.ts';
import { backupTaker } from './service/backup.ts';
import { buildIndexesBetweenRequests } from './service/index-building.ts';
import { SERVICE_TIMERS, type ServiceTimers } from './service/service-timers.ts';
import type { ShardSet } from './shards/shard-set.ts';

export interface RunningService {
  port: number;
  /** The engine of this thread: everything on one thread; the accounts when the connections live on shards. */
  opened: OpenedEngine;
  /** With WORKERS above 1: the shards, started and restarted by the front. */
  shards?: ShardSet;
  snapshotNow(): Promise<void>;
  stop(): Promise<void>;
}

export { SERVICE_TIMERS, type ServiceTimers } from './service/service-timers.ts';

export async function startService(config: Config, log: LogLine, timers: ServiceTimers = SERVICE_TIMERS): Promise<RunningService> {
  // Metrics off (no METRICS_TOKEN): nothing is measured, not only nothing served.
  // prom-client is loaded only then: its import is a noticeable part of every start.
  const metrics =
    config.metricsToken === null
      ? undefined
      : { service: new (await import('./metrics/service-metrics.ts')).ServiceMetrics(), token: config.metricsToken };
  const observer = metrics?.service ?? NOT_OBSERVED;
  const ingestTimings = new IngestTimings();
  if (config.workers > 1 && config.clusterNatsUrl === null) {
    const { startShardedService } = await import('./shards/sharded-service.ts');
    return startShardedService({ config, log, timers, metrics, logObserver: observeAll([metrics?.service, ingestTimings]), ingestTimings });
  }
  const mode = serviceModeFor(config, log);
  const opened = await openEngine(config, {
    log,
    settleLayout: config.clusterNatsUrl === null,
    clusterWaiting: mode.clusterWaiting,
    logObserver: observeAll([metrics?.service, ingestTimings]),
    onListenerError: (error) =>
      log(`live update failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`, { severity: 'error' }),
    onHalt: (error) => {
      log(`the event log failed (${String(error)}); refusing writes and exiting so a restart recovers from the log`, { severity: 'fatal' });
      setTimeout(() => process.exit(1), 100);
    },
  });
  const { engine, store, recovery } = opened;
  observer.recovered(recovery);
  log(
    `recovered: snapshot seq ${recovery.snapshotSeq}, ${recovery.recordsReplayed} records replayed` +
      `${recovery.truncatedBytes > 0 ? `, ${recovery.truncatedBytes} torn bytes cut` : ''} in ${Math.round(recovery.durationMs)} ms`,
    { snapshotSeq: recovery.snapshotSeq, records: recovery.recordsReplayed, truncatedBytes: recovery.truncatedBytes, durationMs: Math.round(recovery.durationMs) },
  );
  const accounts = new AccountService(engine, config.sessionTtlMs, opened.sessionSecret);
  const connections = new ConnectionService(engine);
  const jobActions = new JobActionService(engine, connections);
  const live = new LiveUpdates(engine, systemClock, {
    ...LIVE_UPDATES_DEFAULTS,
    hub: { ...LIVE_UPDATES_DEFAULTS.hub, ringBufferBytesMax: config.streamResumeBufferBytesMax },
    streamsPerUserMax: config.streamsPerUserMax,
    resumeGraceMs: config.streamResumeGraceMs,
    log,
    onStreamEnd: (reason) => observer.streamEnded(reason),
  });
  const alerts = new AlertService(engine);
  const alertDelivery = createAlertEdge({ engine, alerts, config, observer, log, writes: mode.evaluatesAlertsOf(opened) });
  metrics?.service.watch({
    alertsFiring: () => alerts.firingCount(),
    connections: () => [...engine.connectionIds()].flatMap((id) => engine.connection(id) ?? []),
    openStreams: () => live.openStreamCount(),
    logBytesSinceSnapshot: () => store.logBytesSinceSnapshot,
  });
  await mode.firstAdmin(firstAdminMaker(accounts, config, log), engine);
  await clearBackupStaging(config.dataDir);
  const snapshots = new SnapshotSchedule(mode.snapshotPolicy(opened, observer), log);
  const backup = backupTaker(engine, store, config.dataDir, snapshots, log);
  const logError = (line: string): void => log(line, { severity: 'error' });
  const clusterNode = opened.clusterNodeId ?? undefined;
  const app = createApp({ engine, accounts, connections, jobActions, alerts, alertDelivery, live, config, logError, backup, metrics, ingestTimings, clusterNode });
  ingestTimings.start();
  const serving = mode.serve(app, opened);
  const port = app.server!.port!;
  log(`${serving} http://${config.host}:${port} (data in ${config.dataDir}, ${mode.durability})`, {
    host: config.host,
    port,
    dataDir: config.dataDir,
    fsync: config.fsync,
    durability: mode.durability,
  });
  void buildIndexesBetweenRequests(engine);
  log(metrics === undefined ? 'metrics off (set METRICS_TOKEN to serve GET /metrics)' : 'metrics at GET /metrics (bearer METRICS_TOKEN)');

  snapshots.start(timers.snapshotCheckIntervalMs, () => engine.halted);
  const stopRetention = startRetentionTimer(engine, (atMs) => mode.retentionRecords(opened, atMs), timers.retentionIntervalMs, log);
  alertDelivery.runner.start();
  log(`alerts evaluated every ${config.alertEvalMs / 1000} s${config.alertWebhookAllowPrivate ? '; webhooks may reach private addresses (ALERT_WEBHOOK_ALLOW_PRIVATE=true)' : ''}`);

  const stop = async (): Promise<void> => {
    snapshots.stopTimer();
    stopRetention();
    await alertDelivery.runner.stop();
    // Streams first: open streams would keep the server from stopping; in-flight writes still finish.
    live.close();
    await app.stop();
    ingestTimings.stop();
    if (ingestTimings.work.size > 0) log(ingestTimings.summary());
    await snapshots.whenIdle();
    if (!engine.halted && store.logBytesSinceSnapshot > 0) await snapshots.now();
    await opened.close();
  };
  return { port, opened, snapshotNow: () => snapshots.now(), stop };
}
