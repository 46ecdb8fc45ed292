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
import { buildIndexesBetweenRequests } from '../service/index-building.ts';
import { startRetentionTimer } from '../service/retention-timer.ts';
import { SnapshotSchedule } from '../service/snapshot-schedule.ts';
import { storeSnapshotPolicy } from '../service/store-snapshots.ts';
import { engineLimits } from '../open-engine.ts';
import { ShardHost, type ShardRuntimeFactory } from './shard-host.ts';
import type { FromShard, ShardBackupPart, ShardPort, StoreMark } from './shard-protocol.ts';
import { shardApp, shardEngine, shardRuntime } from './shard-runtime.ts';
import { configOfWorker, type ShardWorkerInit } from './worker-init.ts';

declare const self: ShardPort;

function runtimeFactory(init: ShardWorkerInit): ShardRuntimeFactory {
  const config = configOfWorker(init.config);
  const { index, shards } = init;
  const scope = { accounts: false, connections: { partition: index, partitions: shards } } as const;
  return async (accounts, send) => {
    const startedAtMs = performance.now();
    const log: LogLine = (line, fields) => send({ t: 'log', line: `shard ${index}: ${line}`, fields });
    const metrics =
      config.metricsToken === null
        ? undefined
        : { service: new (await import('../metrics/service-metrics.ts')).ServiceMetrics({ processMetrics: false }), token: config.metricsToken };
    const observer = metrics?.service ?? NOT_OBSERVED;
    const ingestTimings = new IngestTimings();
    const store = await openDurableStore({ dir: init.storeDir, storage: new FileStorage(), fsync: config.fsync, log, observer: observeAll([metrics?.service, ingestTimings]) });
    const { engine, restorer } = shardEngine(
      {
        index,
        shards,
        clock: systemClock,
        log: store,
        limits: engineLimits(config),
        // the front restarts the shard, which recovers what its log made durable
        onHalt: (error) => send({ t: 'halted', message: `its log failed (${describeError(error)})` }),
        onListenerError: (error) => log(`live update failed: ${describeError(error)}`, { severity: 'error' }),
      },
      accounts,
    );
    const report = await store.recover({ snapshotChunk: (chunk) => restorer.restore(chunk), record: (record) => engine.evolve(record as never) });
    restorer.reconcileWithAccounts();
    // the front reports the whole service's recovery (every shard's and the accounts') as its own
    const parts = shardApp({
      engine,
      clock: systemClock,
      send: (message: FromShard) => send(message),
      sessionTtlMs: config.sessionTtlMs,
      sessionSecret: init.sessionSecret,
      config,
      alerts: { config, observer },
      live: { ...LIVE_UPDATES_DEFAULTS, streamsPerUserMax: config.streamsPerUserMax, resumeGraceMs: config.streamResumeGraceMs, hub: { ...LIVE_UPDATES_DEFAULTS.hub, ringBufferBytesMax: config.streamResumeBufferBytesMax } },
      log,
      logError: (line) => log(line, { severity: 'error' }),
      metrics,
      ingestTimings,
    });
    metrics?.service.watch({
      alertsFiring: () => parts.alerts.firingCount(),
      connections: () => [...engine.connectionIds()].flatMap((id) => engine.connection(id) ?? []),
      openStreams: () => 0,
      logBytesSinceSnapshot: () => store.logBytesSinceSnapshot,
    });
    const policy = storeSnapshotPolicy({ capture: () => engine.takeSnapshot(scope), store, config, log, observer, label: 'store' });
    const snapshots = new SnapshotSchedule(policy, log);
    /** A snapshot if the log grew since the last, and where the store stands then. */
    const snapshotIfGrown = async (): Promise<StoreMark> => {
      await snapshots.whenIdle();
      if (engine.halted || store.logBytesSinceSnapshot === 0) return { seq: store.lastSeq, bytes: 0 };
      await snapshots.now();
      return { seq: store.lastSeq, bytes: policy.lastWritten?.bytes ?? 0 };
    };
    snapshots.start(init.timers.snapshotCheckIntervalMs, () => engine.halted);
    const stopRetention = startRetentionTimer(engine, (atMs) => [{ t: 'retention', atMs, partition: index, partitions: shards }], init.timers.retentionIntervalMs, log);
    parts.alertDelivery.runner.start();
    ingestTimings.start();
    void buildIndexesBetweenRequests(engine);
    const runtime = shardRuntime(
      engine,
      parts,
      {
        snapshotSeq: report.snapshotSeq,
        recordsReplayed: report.recordsReplayed,
        truncatedBytes: report.truncatedBytes,
        durationMs: performance.now() - startedAtMs,
        connections: [...engine.connectionIds()].length,
      },
      async (call) => {
        switch (call.what) {
          case 'snapshot':
            return snapshotIfGrown();
          case 'stop': {
            snapshots.stopTimer();
            stopRetention();
            runtime.stopTimers();
            await parts.alertDelivery.runner.stop();
            ingestTimings.stop();
            if (ingestTimings.work.size > 0) log(ingestTimings.summary());
            const mark = await snapshotIfGrown();
            await store.close();
            return mark;
          }
          case 'metrics':
            return metrics === undefined ? [] : metrics.service.families();
          case 'backup': {
            // one capture at a time: the backup waits for a running snapshot and holds off the next
            await snapshots.whenIdle();
            const seq = store.lastSeq; // the same tick as the capture: the chunks are the state after it
            const snapshot = engine.takeSnapshot(scope);
            const part: ShardBackupPart = { seq, chunks: [...snapshot.chunks] };
            snapshot.release();
            return part;
          }
          case 'health':
            return { halted: engine.halted };
        }
      },
      LIVE_UPDATES_DEFAULTS.livenessCheckIntervalMs,
    );
    return runtime;
  };
}

// The first message says which shard this is; the host takes every message after it.
self.addEventListener('message', function initialize(event: MessageEvent) {
  const message = event.data as ShardWorkerInit;
  if (message.t !== 'init') return;
  new ShardHost(self, runtimeFactory(message), message.config.publicUrl ?? '');
});
