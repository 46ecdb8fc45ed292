/**
 * A shard's worker thread (src/shards/worker-channel.ts starts it): told which shard it is
 * and the service's settings (`init`), then driven by a ShardHost. On `start` it opens its
 * own store in the data directory, recovers it on top of the accounts the front sent,
 * and runs what a single node runs for its connections: snapshots of its store, retention of
 * its partition, the alert runner that evaluates and sends its connections' webhooks, and
 * the indexes built between requests after a restart. Its log lines go to the front's
 * logger; a failed log halts it and the front starts it again.
 */
import { systemClock } from '../../actors/clock.ts';
import { IngestTimings } from '../../actors/services/ingest-timings.ts';
import { openDurableStore } from '../../persistence/durable-store.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { observeAll } from '../../persistence/log-writer.ts';
import { describeError } from '../../persistence/errors.ts';
import { LIVE_UPDATES_DEFAULTS } from '../live-defaults.ts';
import type { LogLine } from '../logging/log-line.ts';
import { NOT_OBSERVED } from '../metrics/service-observer.ts';
import { buildIndexesBetweenRequests } from '../service/background-work.ts';
import { startRetentionTimer } from '../service/retention-timer.ts';
import { startCommandDeadlineTimer } from '../service/command-deadline-timer.ts';
import { activityOf, startMemoryReturn, WorkMeter } from '../service/memory-return.ts';
import { engineRecoveryHandler } from '../engine-recovery.ts';
import { SnapshotSchedule } from '../service/snapshot-schedule.ts';
import { storeSnapshotPolicy } from '../service/store-snapshots.ts';
import { auditLimitsOf, engineLimitsOf } from '../open-engine.ts';
import { ShardHost, type ShardRuntimeFactory } from './shard-host.ts';
import type { FromShard, ShardBackupPart, ShardCall, ShardPort, StoreMark } from './shard-protocol.ts';
import type { SnapshotChunk } from '../../actors/engine-snapshot.ts';
import type { Engine } from '../../actors/engine.ts';
import type { DurableStore, LogWriterObserver } from '../../persistence/durable-store.ts';
import type { Config } from '../config.ts';
import type { ServiceMetrics } from '../metrics/service-metrics.ts';
import type { ServiceObserver } from '../metrics/service-observer.ts';
import type { ShardApp } from './shard-runtime.ts';
import { shardApp, shardEngine, shardRuntime } from './shard-runtime.ts';
import { configOfWorker, type ShardWorkerInit } from './worker-init.ts';

declare const self: ShardPort;

/** What a started shard's calls and timers work on. */
interface ShardParts {
  init: ShardWorkerInit;
  config: Config;
  engine: Engine;
  store: DurableStore;
  app: ShardApp;
  metrics: { service: ServiceMetrics; token: string } | undefined;
  ingestTimings: IngestTimings;
  /** what this shard took in: the measure of a burst its thread gives memory back after */
  takenIn: WorkMeter;
  log: LogLine;
}

/** Its store opened and recovered on top of the accounts the front sent. */
async function recoverShard(init: ShardWorkerInit, config: Config, accounts: SnapshotChunk[], send: (message: FromShard) => void, log: LogLine, observer: LogWriterObserver | undefined) {
  const store = await openDurableStore({ dir: init.storeDir, storage: new FileStorage(), fsync: config.fsync, log, observer });
  const { engine, restorer } = shardEngine(
    {
      index: init.index,
      shards: init.shards,
      clock: systemClock,
      log: store,
      limits: engineLimitsOf(config),
      audit: auditLimitsOf(config),
      // the front restarts the shard, which recovers what its log made durable
      onHalt: (error) => send({ t: 'halted', message: `its log failed (${describeError(error)})` }),
      onListenerError: (error) => log(`live update failed: ${describeError(error)}`, { severity: 'error' }),
    },
    accounts,
  );
  // a shard's snapshot holds its connections, not the accounts (the front sent those); the
  // front reports the whole service's recovery, every shard's and the accounts', as its own
  const report = await store.recover(engineRecoveryHandler(engine, { wholeState: false }));
  restorer.reconcileWithAccounts();
  return { store, engine, report };
}

/** What one thread runs beside requests, for this shard's connections; returns the schedule and what stops the rest. */
function startShardWork({ init, config, engine, store, app, log, ingestTimings, takenIn }: ShardParts, observer: ServiceObserver) {
  const scope = shardScope(init);
  const policy = storeSnapshotPolicy({ capture: () => engine.takeSnapshot(scope), store, config, log, observer, label: 'store' });
  const snapshots = new SnapshotSchedule(policy, log);
  snapshots.start(init.timers.snapshotCheckIntervalMs, () => engine.halted);
  const stops = [
    startRetentionTimer(engine, (atMs) => [{ t: 'retention', atMs, partition: init.index, partitions: init.shards }], init.timers.retentionIntervalMs, log),
    startCommandDeadlineTimer(engine, undefined, config.commandConfirmMs, log),
    // each shard's thread has its own heap: it collects its own after its own bursts
    startMemoryReturn({ idleMs: config.memoryReturnIdleMs, workBytesMin: config.memoryReturnWorkBytesMin }, { workBytes: () => takenIn.bytes, activity: activityOf(engine) }, log, (returned) =>
      observer.memoryReturned(returned),
    ),
  ];
  app.alertDelivery.runner.start();
  ingestTimings.start();
  void buildIndexesBetweenRequests(engine);
  /** A snapshot if the log grew since the last, and where the store stands then. */
  const snapshotIfGrown = async (): Promise<StoreMark> => {
    await snapshots.whenIdle();
    if (engine.halted || store.logBytesSinceSnapshot === 0) return { seq: store.lastSeq, bytes: 0 };
    await snapshots.now();
    return { seq: store.lastSeq, bytes: policy.lastWritten?.bytes ?? 0 };
  };
  const stop = async (): Promise<void> => {
    snapshots.stopTimer();
    for (const each of stops) each();
    await app.alertDelivery.runner.stop();
    ingestTimings.stop();
    if (ingestTimings.work.size > 0) log(ingestTimings.summary());
  };
  return { snapshots, snapshotIfGrown, stop };
}

/** The shard's answers to the front's calls (ShardCall). */
function shardCalls(parts: ShardParts, work: ReturnType<typeof startShardWork>, stopTimers: () => void): (call: ShardCall) => Promise<unknown> {
  const { engine, store, metrics } = parts;
  return async (call) => {
    switch (call.what) {
      case 'snapshot':
        return work.snapshotIfGrown();
      case 'stop': {
        stopTimers();
        await work.stop();
        const mark = await work.snapshotIfGrown();
        await store.close();
        return mark;
      }
      case 'metrics':
        return metrics === undefined ? [] : metrics.service.families();
      case 'backup': {
        // one capture at a time: the backup waits for a running snapshot and holds off the next
        await work.snapshots.whenIdle();
        const seq = store.lastSeq; // the same tick as the capture: the chunks are the state after it
        const snapshot = engine.takeSnapshot(shardScope(parts.init));
        const part: ShardBackupPart = { seq, chunks: [...snapshot.chunks] };
        snapshot.release();
        return part;
      }
      case 'health':
      case 'locate':
      case 'locateJobs':
        throw new Error(`the shard's runtime answers '${call.what}' itself`);
    }
  };
}

/** A shard's snapshot: its partition's connections, and every audit entry it wrote (some name no connection). */
const shardScope = (init: ShardWorkerInit) => ({ accounts: false, connections: { partition: init.index, partitions: init.shards }, everyAuditEntry: true }) as const;

function runtimeFactory(init: ShardWorkerInit): ShardRuntimeFactory {
  const config = configOfWorker(init.config);
  return async (accounts, send) => {
    const startedAtMs = performance.now();
    const log: LogLine = (line, fields) => send({ t: 'log', line: `shard ${init.index}: ${line}`, fields });
    const metrics =
      config.metricsToken === null
        ? undefined
        : { service: new (await import('../metrics/service-metrics.ts')).ServiceMetrics({ processMetrics: false, taskSeriesMax: config.prometheusTaskSeriesMax }), token: config.metricsToken };
    const observer = metrics?.service ?? NOT_OBSERVED;
    const ingestTimings = new IngestTimings();
    const takenIn = new WorkMeter();
    const { store, engine, report } = await recoverShard(init, config, accounts, send, log, observeAll([metrics?.service, ingestTimings, takenIn]));
    if (report.snapshotSeq > 0 || report.recordsReplayed > 0) takenIn.note(config.memoryReturnWorkBytesMin);
    const app = shardApp({
      engine,
      clock: systemClock,
      send: (message: FromShard) => send(message),
      sessionTtlMs: config.sessionTtlMs,
      sessionSecret: init.sessionSecret,
      passwordLinkTtlMs: config.passwordLinkTtlMs,
      config,
      alerts: { config, observer },
      live: { ...LIVE_UPDATES_DEFAULTS, streamsPerUserMax: config.streamsPerUserMax, resumeGraceMs: config.streamResumeGraceMs, hub: { ...LIVE_UPDATES_DEFAULTS.hub, ringBufferBytesMax: config.streamResumeBufferBytesMax } },
      log,
      logError: (line) => log(line, { severity: 'error' }),
      metrics,
      ingestTimings,
    });
    metrics?.service.watch({
      alertsFiring: () => app.alerts.firingCount(),
      connections: () => [...engine.connectionIds()].flatMap((id) => engine.connection(id) ?? []),
      openStreams: () => 0,
      logBytesSinceSnapshot: () => store.logBytesSinceSnapshot,
    });
    const parts: ShardParts = { init, config, engine, store, app, metrics, ingestTimings, takenIn, log };
    const work = startShardWork(parts, observer);
    const recovery = { ...report, durationMs: performance.now() - startedAtMs, connections: [...engine.connectionIds()].length };
    let stopTimers = (): void => undefined;
    const runtime = shardRuntime(engine, app, recovery, shardCalls(parts, work, () => stopTimers()), LIVE_UPDATES_DEFAULTS.livenessCheckIntervalMs);
    stopTimers = runtime.stopTimers;
    return runtime;
  };
}

// The first message says which shard this is; the host takes every message after it.
self.addEventListener('message', function initialize(event: MessageEvent) {
  const message = event.data as ShardWorkerInit;
  if (message.t !== 'init') return;
  new ShardHost(self, runtimeFactory(message), message.config.publicUrl ?? '');
});
