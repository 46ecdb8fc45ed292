/**
 * The engine as the running service opens it: the data directory (or the cluster's stream)
 * recovered, recovery reported to metrics and said in the log; a live listener that throws
 * is logged, and a log that fails stops the process so that a restart recovers from it.
 */
import type { Config } from '../config.ts';
import type { LogLine } from '../logging/log-line.ts';
import type { ServiceObserver } from '../metrics/service-observer.ts';
import { openEngine, type OpenedEngine } from '../open-engine.ts';
import type { LogWriterObserver } from '../../persistence/log-writer.ts';
import type { ServiceMode } from './service-mode.ts';

/** How long the FATAL line has to reach the log before the process exits. */
const EXIT_AFTER_HALT_MS = 100;

export async function openServiceEngine(
  config: Config,
  log: LogLine,
  mode: ServiceMode,
  observers: { logWriter: LogWriterObserver | undefined; service: ServiceObserver },
): Promise<OpenedEngine> {
  const opened = await openEngine(config, {
    log,
    // one thread: a data directory left in shards (WORKERS was above 1) is moved back into one store first
    settleLayout: config.clusterNatsUrl === null,
    clusterWaiting: mode.clusterWaiting,
    logObserver: observers.logWriter,
    onListenerError: (error) =>
      log(`live update failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`, { severity: 'error' }),
    onHalt: (error) => {
      log(`the event log failed (${String(error)}); refusing writes and exiting so a restart recovers from the log`, { severity: 'fatal' });
      setTimeout(() => process.exit(1), EXIT_AFTER_HALT_MS);
    },
  });
  const { recovery } = opened;
  observers.service.recovered(recovery);
  log(
    `recovered: snapshot seq ${recovery.snapshotSeq}, ${recovery.recordsReplayed} records replayed` +
      `${recovery.truncatedBytes > 0 ? `, ${recovery.truncatedBytes} torn bytes cut` : ''} in ${Math.round(recovery.durationMs)} ms`,
    { snapshotSeq: recovery.snapshotSeq, records: recovery.recordsReplayed, truncatedBytes: recovery.truncatedBytes, durationMs: Math.round(recovery.durationMs) },
  );
  return opened;
}
