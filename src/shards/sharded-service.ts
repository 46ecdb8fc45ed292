/**
 * The running service with WORKERS above 1 (docs/architecture.md, "Shards"): this thread
 * opens the data directory (its layout moved to WORKERS shards if it held another number),
 * keeps the accounts with their own log, starts a worker thread per shard (each recovers its
 * own store), makes the first admin, and serves HTTP through the front that routes and
 * merges (shard-front.ts). A clean stop stops accepting, has every shard snapshot and close
 * its log, snapshots the accounts, and unlocks.
 */
import { systemClock } from '../../actors/clock.ts';
import { Engine } from '../../actors/engine.ts';
import { LiveUpdates } from '../../actors/live/live-updates.ts';
import { AlertService } from '../../actors/services/alert-service.ts';
import { JobActionService } from '../../actors/services/job-action-service.ts';
import { TaskMetricsService } from '../../actors/services/task-metrics-service.ts';
import type { IngestTimings } from '../../actors/services/ingest-timings.ts';
import { acquireDataDirLock, type DataDirLock } from '../../persistence/data-dir-lock.ts';
import { layoutStores } from '../../persistence/data-layout.ts';
import { openDurableStore, type DurableStore, type LogWriterObserver, type RecoveryReport } from '../../persistence/durable-store.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { describeTightening, mkdirPrivate, tightenPrivateTree } from '../../persistence/private-files.ts';
import { keepAccountsMark } from '../accounts-kept.ts';
import { createAlertEdge } from '../alerts/alert-edge.ts';
import { createApp, type App } from '../app.ts';
import { backupStagingDir, clearBackupStaging, writeBackupOf, type BackupFile } from '../backup/write-backup.ts';
import type { Config } from '../config.ts';
import { engineRecoveryHandler } from '../engine-recovery.ts';
import { LIVE_UPDATES_DEFAULTS } from '../live-defaults.ts';
import type { LogLine } from '../logging/log-line.ts';
import type { ServiceMetrics } from '../metrics/service-metrics.ts';
import { NOT_OBSERVED, type ServiceObserver } from '../metrics/service-observer.ts';
import { auditLimitsOf, engineLimitsOf, loadOrCreateSecret, type OpenedEngine } from '../open-engine.ts';
import type { RunningService } from '../server.ts';
import { firstAdminMaker } from '../service/admin-bootstrap.ts';
import { peopleServices } from '../service/people-services.ts';
import type { ServiceTimers } from '../service/background-work.ts';
import { SnapshotSchedule } from '../service/snapshot-schedule.ts';
import { storeSnapshotPolicy, type StoreSnapshotPolicy } from '../service/store-snapshots.ts';
import { combinedSnapshot } from './combined-snapshot.ts';
import { settleLayout } from './reshard.ts';
import { ShardFront } from './shard-front.ts';
import type { ShardBackupPart, StoreMark } from './shard-protocol.ts';
import { ShardSet } from './shard-set.ts';
import { workerChannel } from './worker-channel.ts';
import { plainConfig } from './worker-init.ts';

/** Bun answers a body past this itself; every route reads its body with its own (much smaller) cap. */
const SERVER_BODY_BYTES_MAX = Number.MAX_SAFE_INTEGER;
/** As Elysia's own listen: a connection idle this long is closed (a live stream lifts it for itself). */
const IDLE_TIMEOUT_SECONDS = 30;
/** How long the FATAL line has to reach the log before the process exits. */
const EXIT_AFTER_HALT_MS = 100;

export interface ShardedServiceParts {
  config: Config;
  log: LogLine;
  timers: ServiceTimers;
  metrics: { service: ServiceMetrics; token: string } | undefined;
  logObserver: LogWriterObserver | undefined;
  ingestTimings: IngestTimings;
}

/** The front's own state: the data directory's lock and layout, the accounts' store and engine, the shards (not started). */
interface Front {
  lock: DataDirLock;
  shardDirs: string[];
  accountsStore: DurableStore;
  engine: Engine;
  set: ShardSet;
  accountsRecovery: RecoveryReport;
  sessionSecret: string;
}

async function openFront({ config, log, logObserver }: ShardedServiceParts, lock: DataDirLock): Promise<Front> {
  const storage = new FileStorage();
  const tightened = describeTightening(config.dataDir, await tightenPrivateTree(config.dataDir));
  if (tightened !== null) log(tightened, { severity: 'warn' });
  const limits = engineLimitsOf(config);
  const layout = await settleLayout({ dataDir: config.dataDir, storage, fsync: config.fsync, clock: systemClock, limits, log }, config.workers);
  const stores = layoutStores(config.dataDir, layout);
  if (stores.kind !== 'sharded') throw new Error(`the data directory holds one store, not ${config.workers} shards`);
  const sessionSecret = config.sessionSecret ?? (await loadOrCreateSecret(config.dataDir));
  const set = new ShardSet(config.workers);
  const accountsStore = await openDurableStore({ dir: stores.accounts, storage, fsync: config.fsync, log, observer: logObserver });
  const engine = new Engine({
    clock: systemClock,
    log: set.replicating(accountsStore),
    limits,
    audit: auditLimitsOf(config),
    holds: () => false,
    onHalt: (error) => {
      log(`the accounts' log failed (${String(error)}); refusing writes and exiting so a restart recovers from the log`, { severity: 'fatal' });
      setTimeout(() => process.exit(1), EXIT_AFTER_HALT_MS);
    },
    onListenerError: (error) => log(`live update failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`, { severity: 'error' }),
  });
  // the accounts' store holds a snapshot of the accounts alone, as a whole state's holds them
  const accountsRecovery = await accountsStore.recover(engineRecoveryHandler(engine, { wholeState: true }));
  // a directory whose users vanished never gets a fresh admin (as one store's manifest keeps it)
  if (accountsRecovery.marks !== undefined) await keepAccountsMark(engine, { mark: (name) => accountsStore.mark!(name) }, accountsRecovery.marks, config.dataDir, log);
  return { lock, shardDirs: stores.shards, accountsStore, engine, set, accountsRecovery, sessionSecret };
}

/** The front's hubs, fed by the shards, and the shards started; resolves once every one recovered. */
async function startShards(front: Front, { config, log, timers }: ShardedServiceParts, observer: ServiceObserver): Promise<{ live: LiveUpdates; recovery: RecoveryReport }> {
  const { engine, set, sessionSecret } = front;
  const live = new LiveUpdates(engine, systemClock, {
    ...LIVE_UPDATES_DEFAULTS,
    hub: { ...LIVE_UPDATES_DEFAULTS.hub, ringBufferBytesMax: config.streamResumeBufferBytesMax },
    streamsPerUserMax: config.streamsPerUserMax,
    resumeGraceMs: config.streamResumeGraceMs,
    log,
    onStreamEnd: (reason) => observer.streamEnded(reason),
    remoteFeed: set.liveFeed,
  });
  set.connect({
    engine,
    live,
    log,
    spawn: (index) => workerChannel({ t: 'init', index, shards: config.workers, storeDir: front.shardDirs[index]!, sessionSecret, config: plainConfig(config), timers }),
  });
  const startedAtMs = performance.now();
  await set.start();
  const recovery = set.recoveryTotal(front.accountsRecovery, performance.now() - startedAtMs);
  observer.recovered(recovery);
  // as a single node's line, the sequences added up over the stores
  log(
    `recovered: snapshot seq ${recovery.snapshotSeq}, ${recovery.recordsReplayed} records replayed` +
      `${recovery.truncatedBytes > 0 ? `, ${recovery.truncatedBytes} torn bytes cut` : ''} in ${Math.round(recovery.durationMs)} ms`,
    { snapshotSeq: recovery.snapshotSeq, records: recovery.recordsReplayed, truncatedBytes: recovery.truncatedBytes, durationMs: Math.round(recovery.durationMs) },
  );
  return { live, recovery };
}

/** The accounts' snapshots, and every store's: on demand, at a stop, and in a backup. */
function frontSnapshots(front: Front, config: Config, log: LogLine, observer: ServiceObserver) {
  const { engine, accountsStore, set } = front;
  const policy: StoreSnapshotPolicy = storeSnapshotPolicy({ capture: () => engine.takeSnapshot(), store: accountsStore, config, log, observer, label: 'accounts store' });
  const schedule = new SnapshotSchedule(policy, log);
  /** The accounts' store snapshotted if its log grew, then one line for all stores, sequences added up as at recovery. */
  const all = async (shardMarks: Array<StoreMark | null>, startedAtMs: number): Promise<void> => {
    await schedule.whenIdle();
    let accountsBytes = 0;
    if (!engine.halted && accountsStore.logBytesSinceSnapshot > 0) {
      await schedule.now();
      accountsBytes = policy.lastWritten?.bytes ?? 0;
    }
    const marks = [...shardMarks.filter((mark) => mark !== null), { seq: accountsStore.lastSeq, bytes: accountsBytes }];
    const bytes = marks.reduce((sum, mark) => sum + mark.bytes, 0);
    if (bytes === 0) return;
    const seq = marks.reduce((sum, mark) => sum + mark.seq, 0);
    const durationMs = Math.round(performance.now() - startedAtMs);
    log(`snapshot at seq ${seq}: ${bytes} bytes in ${durationMs} ms`, { seq, bytes, durationMs });
  };
  /** One snapshot with everything: each shard's part, then the accounts (a connection deleted meanwhile is left out). */
  const backup = async (): Promise<BackupFile> => {
    await schedule.whenIdle();
    const parts = (await Promise.all(set.links.map((link) => link.call({ what: 'backup' })))) as ShardBackupPart[];
    const accountsPart = engine.takeSnapshot({ accounts: true, connections: 'none', everyAuditEntry: true });
    const seq = parts.reduce((sum, part) => sum + part.seq, accountsStore.lastSeq);
    const whole = combinedSnapshot(
      accountsPart,
      parts.map((part) => part.chunks),
    );
    const written = writeBackupOf(whole, seq, backupStagingDir(config.dataDir));
    schedule.hold(
      written.then(
        (file) => log(`backup at seq ${file.seq}: ${file.bytes} bytes`, { seq: file.seq, bytes: file.bytes }),
        (error) => log(`backup failed: ${String(error)}`, { severity: 'error' }),
      ),
    );
    return written;
  };
  return { schedule, all, backup };
}

/** The front's application: what it answers itself (the accounts, the stream, the backup) over its engine of the accounts. */
function frontApp(front: Front, parts: ShardedServiceParts, live: LiveUpdates, backup: () => Promise<BackupFile>, observer: ServiceObserver) {
  const { engine, set } = front;
  const { config, log, metrics } = parts;
  const people = peopleServices(engine, config, front.sessionSecret, log);
  const alerts = new AlertService(engine, config.publicUrl);
  const app = createApp({
    engine,
    ...people,
    jobActions: new JobActionService(engine, people.connections),
    taskMetrics: new TaskMetricsService(engine, people.connections),
    alerts,
    alertDelivery: createAlertEdge({ engine, alerts, config, observer, log }),
    live,
    config,
    logError: (line) => log(line, { severity: 'error' }),
    backup,
    metrics: metrics === undefined ? undefined : { ...metrics, scrape: async () => metrics.service.scrapeWith((await Promise.all(set.links.map((link) => link.call({ what: 'metrics' }).catch(() => [])))) as never) },
    ingestTimings: parts.ingestTimings,
    shards: set,
  });
  return { app, ...people };
}

function serve(config: Config, front: ShardFront, app: App, log: LogLine) {
  const server = Bun.serve({
    port: config.port,
    hostname: config.host,
    maxRequestBodySize: SERVER_BODY_BYTES_MAX,
    idleTimeout: IDLE_TIMEOUT_SECONDS,
    // as a single node: Bun's development mode answers an uncaught error with source lines
    development: false,
    fetch: (request, bunServer) => front.handle(request, bunServer),
  });
  // the front's own routes (the live stream lifts its idle timeout) reach the server through their app
  (app as unknown as { server: unknown }).server = server;
  const port = server.port!;
  const { host, dataDir, fsync, workers } = config;
  log(`listening on http://${host}:${port} (data in ${dataDir}, fsync ${fsync}, ${workers} shards)`, { host, port, dataDir, fsync, shards: workers });
  return server;
}

export async function startShardedService(parts: ShardedServiceParts): Promise<RunningService> {
  const { config, log, metrics } = parts;
  const observer = metrics?.service ?? NOT_OBSERVED;
  await mkdirPrivate(config.dataDir);
  const lock = await acquireDataDirLock(config.dataDir, log);
  let front: Front;
  try {
    front = await openFront(parts, lock);
  } catch (error) {
    await lock.release();
    throw error;
  }
  const { engine, accountsStore, set } = front;
  const { live, recovery } = await startShards(front, parts, observer).catch(async (error: unknown) => {
    // a shard that cannot start stops the start, as one store's refusal does, the directory let go
    await set.stop();
    await accountsStore.close();
    await lock.release();
    throw error;
  });
  metrics?.service.watch({ connections: () => [], openStreams: () => live.openStreamCount(), logBytesSinceSnapshot: () => accountsStore.logBytesSinceSnapshot });
  const snapshots = frontSnapshots(front, config, log, observer);
  const { app, accounts, connections, teams } = frontApp(front, parts, live, snapshots.backup, observer);
  await firstAdminMaker(accounts, teams, config, log)();
  await clearBackupStaging(config.dataDir);
  const shardFront = new ShardFront({ links: set.links, app, engine, accounts, connections, config, logError: (line) => log(line, { severity: 'error' }) });
  const server = serve(config, shardFront, app, log);
  log(metrics === undefined ? 'metrics off (set METRICS_TOKEN to serve GET /metrics)' : 'metrics at GET /metrics (bearer METRICS_TOKEN)');
  snapshots.schedule.start(parts.timers.snapshotCheckIntervalMs, () => engine.halted);
  log(`alerts evaluated every ${config.alertEvalMs / 1000} s by each shard for its connections${config.alertWebhookAllowPrivate ? '; webhooks may reach private addresses (ALERT_WEBHOOK_ALLOW_PRIVATE=true)' : ''}`);
  const opened: OpenedEngine = {
    engine,
    store: accountsStore,
    lock,
    recovery,
    sessionSecret: front.sessionSecret,
    clusterNodeId: null,
    cluster: null,
    close: async () => {
      await accountsStore.close();
      await lock.release();
    },
  };
  const stop = async (): Promise<void> => {
    snapshots.schedule.stopTimer();
    // streams first: open streams would keep the server from stopping; requests in flight still finish
    live.close();
    await server.stop();
    const stoppingAtMs = performance.now();
    await snapshots.all(await set.stop(), stoppingAtMs);
    await opened.close();
  };
  return {
    port: server.port!,
    opened,
    shards: set,
    snapshotNow: async () => {
      const startedAtMs = performance.now();
      await snapshots.all(await set.snapshot(), startedAtMs);
    },
    stop,
  };
}
