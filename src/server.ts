/**
 * The running service: open the data directory, make sure an admin exists, serve HTTP,
 * take snapshots when the log grows or time passes, and shut down cleanly (stop
 * accepting, snapshot, sync, unlock) on SIGTERM/SIGINT.
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
import { backupStagingDir, clearBackupStaging, writeBackup, type BackupFile } from './backup/write-backup.ts';
import { DomainError } from '../actors/domain-error.ts';
import type { Engine, RetentionRecord } from '../actors/engine.ts';
import type { LogLine } from './logging/log-line.ts';
import { NOT_OBSERVED } from './metrics/service-observer.ts';
import { IngestTimings } from '../actors/services/ingest-timings.ts';
import { observeAll } from '../persistence/log-writer.ts';
import { ClusterFront } from './http/cluster-front.ts';
import { ACCOUNTS_PARTITION_KEY, connectionPartitionKey } from './http/write-partition.ts';
import { partitionNumberOf, snapshotPartitions } from './partition-snapshots.ts';

export interface RunningService {
  port: number;
  opened: OpenedEngine;
  snapshotNow(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Bun answers a body past this itself, with an empty 413 before any of our code runs. Every
 * route reads its body through src/http/read-body.ts, which refuses past the route's own
 * (much smaller) cap with our JSON 413 and never buffers more than that cap; so Bun's limit
 * only has to stay out of the way.
 */
const SERVER_BODY_BYTES_MAX = Number.MAX_SAFE_INTEGER;

/** How often the service checks whether a snapshot is due and runs retention; tests shorten them. */
export interface ServiceTimers {
  snapshotCheckIntervalMs: number;
  /** Retention runs as a logged record, so replay removes exactly what the live run removed. */
  retentionIntervalMs: number;
}

export const SERVICE_TIMERS: ServiceTimers = { snapshotCheckIntervalMs: 5_000, retentionIntervalMs: 60_000 };

/** How long after listening the remaining indexes start to be built: the first requests after a restart come first. */
const INDEX_BUILD_DELAY_MS = 1_000;

/**
 * After a recovery from a snapshot the job indexes are built on first use (job-store.ts), so
 * the service answers sooner; the rest are built here, one index per timer turn, so
 * requests are answered between them (a request that needs one builds it itself).
 */
async function buildIndexesBetweenRequests(engine: Engine): Promise<void> {
  const turn = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());
  await turn(INDEX_BUILD_DELAY_MS);
  for (const id of [...engine.connectionIds()]) {
    while (engine.connection(id)?.jobs.buildNextIndex() === true) await turn(1);
  }
}

export async function startService(config: Config, log: LogLine, timers: ServiceTimers = SERVICE_TIMERS): Promise<RunningService> {
  // Metrics off (no METRICS_TOKEN): nothing is measured, not only nothing served.
  // prom-client is loaded only then: its import is a noticeable part of every start.
  const metrics =
    config.metricsToken === null
      ? undefined
      : { service: new (await import('./metrics/service-metrics.ts')).ServiceMetrics(), token: config.metricsToken };
  const observer = metrics?.service ?? NOT_OBSERVED;
  const ingestTimings = new IngestTimings();
  // Cluster mode: answer from the moment NATS is reached (503 until the replica recovered).
  // the writer of the accounts partition makes the first admin, once the services exist
  const services = Promise.withResolvers<() => Promise<void>>();
  let adminEnsured: Promise<void> | undefined;
  const whenWriting = async (key: string): Promise<void> => {
    if (key !== ACCOUNTS_PARTITION_KEY) return;
    const ensureAdmin = await services.promise;
    // a failure to write the first admin halts the engine (onHalt stops the process)
    adminEnsured ??= ensureAdmin().catch((error: unknown) => engine.halt(error));
    await adminEnsured;
  };
  const front = config.clusterNatsUrl === null ? undefined : new ClusterFront({ ...config, clusterSecret: config.clusterSecret ?? '' }, log);
  const opened = await openEngine(config, {
    log,
    clusterWaiting: front && {
      connected: (nodeId) => front.listen(nodeId),
      writing: (key) => whenWriting(key),
    },
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
  const cluster = opened.cluster;
  const alertDelivery = createAlertEdge({
    engine,
    alerts,
    config,
    observer,
    log,
    // cluster mode: only the writer of a connection's partition evaluates and sends, so each alert is sent once
    writes: cluster === null ? undefined : (connectionId) => cluster.store.writing().includes(connectionPartitionKey(connectionId, config.clusterPartitions)),
  });
  metrics?.service.watch({
    alertsFiring: () => alerts.firingCount(),
    connections: () => [...engine.connectionIds()].flatMap((id) => engine.connection(id) ?? []),
    openStreams: () => live.openStreamCount(),
    logBytesSinceSnapshot: () => store.logBytesSinceSnapshot,
  });
  const ensureAdmin = async (): Promise<void> => {
    const admin = await accounts.ensureAdmin(config.adminEmail, config.adminPassword);
    if (admin !== null) {
      log(
        admin.generatedPassword === null
          ? `created admin ${admin.email} from ADMIN_EMAIL/ADMIN_PASSWORD`
          : `created admin ${admin.email} with one-time password: ${admin.generatedPassword}  (shown once; set ADMIN_EMAIL and ADMIN_PASSWORD before the first start to choose it)`,
      );
    }
  };
  // in cluster mode the first admin is made by whichever node writes the accounts partition, once it does
  if (front === undefined) await ensureAdmin();
  await clearBackupStaging(config.dataDir);
  let snapshotting: Promise<void> | null = null;
  /** Waits for a running snapshot (one copy-on-write at a time) and holds off the next while it writes. */
  const backup = async (): Promise<BackupFile> => {
    while (snapshotting !== null) await snapshotting.catch(() => undefined);
    if (engine.halted) throw new DomainError('SERVICE_UNAVAILABLE', 'the event log failed; no backup can be taken');
    const written = writeBackup(engine, store, backupStagingDir(config.dataDir));
    snapshotting = written.then(
      (file) => log(`backup at seq ${file.seq}: ${file.bytes} bytes`, { seq: file.seq, bytes: file.bytes }),
      (error) => log(`backup failed: ${String(error)}`, { severity: 'error' }),
    ).finally(() => {
      snapshotting = null;
    });
    return written;
  };
  const logError = (line: string): void => log(line, { severity: 'error' });
  const clusterNode = opened.clusterNodeId ?? undefined;
  const app = createApp({ engine, accounts, connections, jobActions, alerts, alertDelivery, live, config, logError, backup, metrics, ingestTimings, clusterNode });
  ingestTimings.start();
  const durability = config.clusterNatsUrl === null ? `fsync ${config.fsync}` : 'log on JetStream';
  const serving = (what: string): void => {
    const port = app.server!.port!;
    log(`${what} http://${config.host}:${port} (data in ${config.dataDir}, ${durability})`, { host: config.host, port, dataDir: config.dataDir, fsync: config.fsync, durability });
  };
  if (front === undefined) {
    // development: false whatever NODE_ENV says: Bun's development mode answers an uncaught
    // error with a page of source lines and the working directory.
    app.listen({ port: config.port, hostname: config.host, maxRequestBodySize: SERVER_BODY_BYTES_MAX, development: false });
    serving('listening on');
  } else {
    const cluster = opened.cluster!;
    front.replicate(app, engine, cluster);
    serving('a replica of every partition, serving on');
    services.resolve(ensureAdmin);
  }
  const port = front?.port ?? app.server!.port!;
  void buildIndexesBetweenRequests(engine);
  log(metrics === undefined ? 'metrics off (set METRICS_TOKEN to serve GET /metrics)' : 'metrics at GET /metrics (bearer METRICS_TOKEN)');

  let lastSnapshotMs = Date.now();
  const snapshotNow = (): Promise<void> => {
    if (snapshotting !== null) return snapshotting;
    if (opened.cluster !== null) {
      snapshotting = snapshotPartitions(opened.cluster, engine, config, { log, observer, all: true }).finally(() => {
        snapshotting = null;
      });
      return snapshotting;
    }
    const snapshot = engine.takeSnapshot(); // in the same tick as writeSnapshot fixes the log position
    snapshotting = store
      .writeSnapshot(snapshot)
      .then((written) => {
        lastSnapshotMs = Date.now();
        observer.snapshotWritten(written.bytes, written.durationMs);
        log(`snapshot at seq ${written.seq}: ${written.bytes} bytes in ${Math.round(written.durationMs)} ms`, {
          seq: written.seq,
          bytes: written.bytes,
          durationMs: Math.round(written.durationMs),
        });
      })
      .finally(() => {
        snapshot.release();
        snapshotting = null;
      });
    return snapshotting;
  };
  const snapshotTimer = setInterval(() => {
    if (engine.halted || snapshotting !== null) return;
    if (opened.cluster !== null) {
      // each partition this node writes, when its own log passed the size or the interval
      snapshotting = snapshotPartitions(opened.cluster, engine, config, { log, observer, all: false })
        .catch((error: unknown) => log(`snapshot failed: ${String(error)}`, { severity: 'error' }))
        .finally(() => {
          snapshotting = null;
        });
      return;
    }
    const logFull = store.logBytesSinceSnapshot >= config.snapshotLogBytesMax;
    // Stryker disable next-line EqualityOperator: `>` differs by one millisecond of wall clock; the next check catches up
    const intervalPassed = Date.now() - lastSnapshotMs >= config.snapshotIntervalMs;
    const due = logFull || intervalPassed;
    if (due && store.logBytesSinceSnapshot > 0) snapshotNow().catch((error) => log(`snapshot failed: ${String(error)}`, { severity: 'error' }));
  }, timers.snapshotCheckIntervalMs);
  snapshotTimer.unref();

  const retentionTimer = setInterval(() => {
    // Stryker disable next-line ConditionalExpression: a halted engine refuses the commit anyway, and onHalt exits the process within 100 ms
    if (engine.halted) return;
    const atMs = Date.now();
    // cluster mode: one record per partition this node writes (a replica applies the writers' records)
    const records: RetentionRecord[] =
      opened.cluster === null
        ? [{ t: 'retention', atMs }]
        : opened.cluster.store.writing().flatMap((key) => {
            const partition = partitionNumberOf(key);
            return partition === null ? [] : [{ t: 'retention' as const, atMs, partition, partitions: config.clusterPartitions }];
          });
    for (const record of records) {
      // Stryker disable next-line ArrowFunction,StringLiteral,ObjectLiteral: a failed commit halts the engine, whose FATAL line names the cause; this line only adds context
      engine.commit(record).catch((error) => log(`retention failed: ${String(error)}`, { severity: 'error' }));
    }
  }, timers.retentionIntervalMs);
  retentionTimer.unref();

  alertDelivery.runner.start();
  log(`alerts evaluated every ${config.alertEvalMs / 1000} s${config.alertWebhookAllowPrivate ? '; webhooks may reach private addresses (ALERT_WEBHOOK_ALLOW_PRIVATE=true)' : ''}`);

  const stop = async (): Promise<void> => {
    clearInterval(snapshotTimer);
    clearInterval(retentionTimer);
    await alertDelivery.runner.stop();
    // Streams first: open streams would keep the server from stopping; in-flight writes still finish.
    live.close();
    await app.stop();
    ingestTimings.stop();
    if (ingestTimings.work.size > 0) log(ingestTimings.summary());
    await snapshotting?.catch(() => undefined);
    if (!engine.halted && store.logBytesSinceSnapshot > 0) await snapshotNow();
    await opened.close();
  };
  return { port, opened, snapshotNow, stop };
}
