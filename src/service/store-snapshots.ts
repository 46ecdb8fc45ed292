/**
 * Snapshots of one local store (a single node's, or a shard's or the front's accounts when
 * the connections live on shards): when its log since the last snapshot passed
 * SNAPSHOT_LOG_MB or SNAPSHOT_INTERVAL_MINUTES passed, and on demand.
 */
import type { EngineSnapshot } from '../../actors/engine-snapshot.ts';
import type { DurableStore } from '../../persistence/durable-store.ts';
import type { Config } from '../config.ts';
import type { LogLine } from '../logging/log-line.ts';
import type { ServiceObserver } from '../metrics/service-observer.ts';
import type { SnapshotPolicy } from './snapshot-schedule.ts';

export interface StoreSnapshotParts {
  /** the engine's state to write, captured in the same tick as the store fixes the log position */
  capture: () => EngineSnapshot;
  store: DurableStore;
  config: Pick<Config, 'snapshotLogBytesMax' | 'snapshotIntervalMs'>;
  log: LogLine;
  observer: Pick<ServiceObserver, 'snapshotWritten'>;
  /**
   * Names one store of several (a shard's, the accounts'): its line then says `<label> snapshot:
   * seq ...`, and the service logs `snapshot at seq` for all of them together.
   */
  label?: string;
}

export interface StoreSnapshotPolicy extends SnapshotPolicy {
  /** The newest snapshot this policy wrote, null before the first. */
  readonly lastWritten: { seq: number; bytes: number } | null;
}

export function storeSnapshotPolicy({ capture, store, config, log, observer, label }: StoreSnapshotParts): StoreSnapshotPolicy {
  let lastSnapshotMs = Date.now();
  let lastWritten: { seq: number; bytes: number } | null = null;
  const takeAll = (): Promise<void> => {
    const snapshot = capture(); // in the same tick as writeSnapshot fixes the log position
    return store
      .writeSnapshot(snapshot)
      .then((written) => {
        lastSnapshotMs = Date.now();
        lastWritten = { seq: written.seq, bytes: written.bytes };
        observer.snapshotWritten(written.bytes, written.durationMs);
        const what = label === undefined ? `snapshot at seq ${written.seq}:` : `${label} snapshot: seq ${written.seq},`;
        log(`${what} ${written.bytes} bytes in ${Math.round(written.durationMs)} ms`, {
          seq: written.seq,
          bytes: written.bytes,
          durationMs: Math.round(written.durationMs),
        });
      })
      .finally(() => snapshot.release());
  };
  return {
    takeAll,
    get lastWritten() {
      return lastWritten;
    },
    takeDue() {
      const logFull = store.logBytesSinceSnapshot >= config.snapshotLogBytesMax;
      // Stryker disable next-line EqualityOperator: `>` differs by one millisecond of wall clock; the next check catches up
      const intervalPassed = Date.now() - lastSnapshotMs >= config.snapshotIntervalMs;
      const due = logFull || intervalPassed;
      return due && store.logBytesSinceSnapshot > 0 ? takeAll() : null;
    },
  };
}
