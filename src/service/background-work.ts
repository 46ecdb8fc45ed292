/**
 * What the service does beside answering requests, started once it listens: the job
 * indexes a restart left unbuilt, snapshots when due, retention, alert evaluation and
 * delivery, and giving memory back after a burst. Returns what stops the timers (what runs
 * finishes; the stop waits for alerts).
 */
import type { Engine } from '../../actors/engine.ts';
import type { AlertEdge } from '../alerts/alert-edge.ts';
import type { Config } from '../config.ts';
import type { LogLine } from '../logging/log-line.ts';
import type { ServiceObserver } from '../metrics/service-observer.ts';
import type { OpenedEngine } from '../open-engine.ts';
import { startRetentionTimer } from './retention-timer.ts';
import { startCommandDeadlineTimer } from './command-deadline-timer.ts';
import { activityOf, startMemoryReturn, type WorkMeter } from './memory-return.ts';
import type { ServiceMode } from './service-mode.ts';
import type { SnapshotSchedule } from './snapshot-schedule.ts';

/** How often the service checks whether a snapshot is due and runs retention; tests shorten them. */
export interface ServiceTimers {
  snapshotCheckIntervalMs: number;
  /** Retention runs as a logged record, so replay removes exactly what the live run removed. */
  retentionIntervalMs: number;
}

/** How long after listening the remaining indexes start to be built: the first requests after a restart come first. */
const INDEX_BUILD_DELAY_MS = 1_000;

/**
 * After a recovery from a snapshot the job indexes are built on first use (job-store.ts), so
 * the service answers sooner; the rest are built here, one index per timer turn, so
 * requests are answered between them (a request that needs one builds it itself).
 */
export async function buildIndexesBetweenRequests(engine: Engine): Promise<void> {
  const turn = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());
  await turn(INDEX_BUILD_DELAY_MS);
  for (const id of [...engine.connectionIds()]) {
    while (engine.connection(id)?.jobs.buildNextIndex() === true) await turn(1);
  }
}

export function startBackgroundWork(
  parts: { opened: OpenedEngine; mode: ServiceMode; snapshots: SnapshotSchedule; alertDelivery: AlertEdge; work: WorkMeter; observer: ServiceObserver },
  config: Pick<Config, 'alertEvalMs' | 'alertWebhookAllowPrivate' | 'commandConfirmMs' | 'memoryReturnIdleMs' | 'memoryReturnWorkBytesMin'>,
  timers: ServiceTimers,
  log: LogLine,
): () => Promise<void> {
  const { opened, mode, snapshots, alertDelivery, work, observer } = parts;
  const { engine } = opened;
  void buildIndexesBetweenRequests(engine);
  snapshots.start(timers.snapshotCheckIntervalMs, () => engine.halted);
  // what this node took in: its own log writes, and in cluster mode what its replica applied
  const workBytes = (): number => work.bytes + (opened.cluster?.store.bytesApplied ?? 0);
  const stopTimers = [
    startRetentionTimer(engine, (atMs) => mode.retentionRecords(opened, atMs), timers.retentionIntervalMs, log),
    startCommandDeadlineTimer(engine, mode.writesConnectionsOf(opened), config.commandConfirmMs, log),
    startMemoryReturn({ idleMs: config.memoryReturnIdleMs, workBytesMin: config.memoryReturnWorkBytesMin }, { workBytes, activity: activityOf(engine) }, log, (returned) =>
      observer.memoryReturned(returned),
    ),
  ];
  alertDelivery.runner.start();
  log(`alerts evaluated every ${config.alertEvalMs / 1000} s${config.alertWebhookAllowPrivate ? '; webhooks may reach private addresses (ALERT_WEBHOOK_ALLOW_PRIVATE=true)' : ''}`);
  return async () => {
    snapshots.stopTimer();
    for (const stopTimer of stopTimers) stopTimer();
    await alertDelivery.runner.stop();
  };
}
