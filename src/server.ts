/**
 * The running service: open the data directory, make sure an admin exists, serve HTTP,
 * take snapshots when the log grows or time passes, run retention, and shut down cleanly
 * (stop accepting, snapshot, sync, unlock) on SIGTERM/SIGINT. Its parts are in src/service/:
 * opening the engine (open-service-engine.ts), the use cases (app-services.ts), the work
 * beside requests (background-work.ts: indexes, snapshots, retention, alerts), optional
 * metrics, the first admin, the backup, and the one place where a single node and a cluster
 * node differ (service-mode.ts).
 */
import { createApp } from './app.ts';
import type { Config } from './config.ts';
import type { OpenedEngine } from './open-engine.ts';
import { clearBackupStaging } from './backup/write-backup.ts';
import type { LogLine } from './logging/log-line.ts';
import { NOT_OBSERVED } from './metrics/service-observer.ts';
import { IngestTimings } from '../actors/services/ingest-timings.ts';
import { observeAll } from '../persistence/log-writer.ts';
import { serviceModeFor } from './service/service-mode.ts';
import { SnapshotSchedule } from './service/snapshot-schedule.ts';
import { firstAdminMaker } from './service/admin-bootstrap.ts';
import { backupTaker } from './service/backup.ts';
import { openServiceEngine } from './service/open-service-engine.ts';
import { createAppServices } from './service/app-services.ts';
import { startBackgroundWork, type ServiceTimers } from './service/background-work.ts';
import { optionalMetrics } from './service/optional-metrics.ts';
import { WorkMeter } from './service/memory-return.ts';
import type { ShardSet } from './shards/shard-set.ts';

export type { ServiceTimers } from './service/background-work.ts';

export interface RunningService {
  port: number;
  /** The engine of this thread: everything on one thread; the accounts when the connections live on shards. */
  opened: OpenedEngine;
  /** With WORKERS above 1: the shards, started and restarted by the front. */
  shards?: ShardSet;
  snapshotNow(): Promise<void>;
  stop(): Promise<void>;
}

export const SERVICE_TIMERS: ServiceTimers = { snapshotCheckIntervalMs: 5_000, retentionIntervalMs: 60_000 };

export async function startService(config: Config, log: LogLine, timers: ServiceTimers = SERVICE_TIMERS): Promise<RunningService> {
  const metrics = await optionalMetrics(config);
  const observer = metrics?.service ?? NOT_OBSERVED;
  const ingestTimings = new IngestTimings();
  if (config.workers > 1 && config.clusterNatsUrl === null) {
    const { startShardedService } = await import('./shards/sharded-service.ts');
    return startShardedService({ config, log, timers, metrics, logObserver: observeAll([metrics?.service, ingestTimings]), ingestTimings });
  }
  const mode = serviceModeFor(config, log);
  const work = new WorkMeter();
  const opened = await openServiceEngine(config, log, mode, { logWriter: observeAll([metrics?.service, ingestTimings, work]), service: observer });
  const { engine, store } = opened;
  // a recovery parsed the snapshot and the log: a burst like any other, its leftovers given back once the node is quiet
  // (a cluster node's readers count what they applied themselves)
  if (opened.cluster === null && (opened.recovery.snapshotSeq > 0 || opened.recovery.recordsReplayed > 0)) work.note(config.memoryReturnWorkBytesMin);
  const services = createAppServices(opened, config, log, mode, observer);
  metrics?.service.watch({
    alertsFiring: () => services.alerts.firingCount(),
    connections: () => [...engine.connectionIds()].flatMap((id) => engine.connection(id) ?? []),
    openStreams: () => services.live.openStreamCount(),
    logBytesSinceSnapshot: () => store.logBytesSinceSnapshot,
    ...(opened.cluster === null ? {} : { replicaRecordsApplied: () => opened.cluster!.store.recordsApplied }),
  });
  await mode.firstAdmin(firstAdminMaker(services.accounts, services.teams, config, log), engine);
  await clearBackupStaging(config.dataDir);
  const snapshots = new SnapshotSchedule(mode.snapshotPolicy(opened, observer), log);
  const backup = backupTaker(engine, store, config.dataDir, snapshots, log);
  const logError = (line: string): void => log(line, { severity: 'error' });
  const app = createApp({ engine, ...services, config, logError, backup, metrics, ingestTimings, clusterNode: opened.clusterNodeId ?? undefined });
  ingestTimings.start();
  const serving = mode.serve(app, opened, services);
  const port = app.server!.port!;
  log(`${serving} http://${config.host}:${port} (data in ${config.dataDir}, ${mode.durability})`, {
    host: config.host,
    port,
    dataDir: config.dataDir,
    fsync: config.fsync,
    durability: mode.durability,
  });
  log(metrics === undefined ? 'metrics off (set METRICS_TOKEN to serve GET /metrics)' : 'metrics at GET /metrics (bearer METRICS_TOKEN)');
  const stopBackgroundWork = startBackgroundWork({ opened, mode, snapshots, alertDelivery: services.alertDelivery, work, observer }, config, timers, log);

  const stop = async (): Promise<void> => {
    await stopBackgroundWork();
    // Streams first: open streams would keep the server from stopping; in-flight writes still finish.
    services.live.close();
    await app.stop();
    ingestTimings.stop();
    if (ingestTimings.work.size > 0) log(ingestTimings.summary());
    await snapshots.whenIdle();
    if (!engine.halted && store.logBytesSinceSnapshot > 0) await snapshots.now();
    await opened.close();
  };
  return { port, opened, snapshotNow: () => snapshots.now(), stop };
}
