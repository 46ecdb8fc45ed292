/**
 * Snapshots in cluster mode (docs/cluster.md, "Layout, the store, recovery and
 * handovers"): each partition this node writes is snapshotted on its own, by its own measure
 * (its log bytes since its snapshot
 * past SNAPSHOT_LOG_MB, or SNAPSHOT_INTERVAL_MINUTES passed, at most every 6 hours so a
 * replay never needs a message older than the stream's max_age), as object `p.<n>` with
 * the connections of partition n, or `accounts` with the accounts alone. One at a time:
 * each copy-on-write capture stalls requests for a moment.
 *
 * A connection partition gets a retention record every minute; the accounts partition may
 * stay quiet for days (nobody logs in). Its messages would then all pass the stream's
 * max_age and the subject would empty: its writer's next append would be refused
 * (the fence names a sequence the subject no longer has) and a start would find the
 * subject ending before its snapshot. So a quiet accounts partition gets a keep-alive
 * record every snapshot interval, and a snapshot covering it.
 */
import type { Engine } from '../actors/engine.ts';
import type { SnapshotScope } from '../actors/engine-snapshot.ts';
import type { Config } from './config.ts';
import type { LogLine } from './logging/log-line.ts';
import type { ServiceObserver } from './metrics/service-observer.ts';
import type { ClusterNode } from './open-engine.ts';

/** The stream keeps retention + 2 days of messages; snapshotting every partition far more often keeps replay within it. */
export const PARTITION_SNAPSHOT_INTERVAL_MAX_MS = 6 * 60 * 60 * 1000;

const ACCOUNTS_KEY = 'accounts';

/** `p.<n>` -> n; null for the accounts partition. */
export function partitionNumberOf(key: string): number | null {
  const match = /^p\.(\d+)$/.exec(key);
  return match === null ? null : Number(match[1]);
}

export function scopeOf(key: string, partitions: number): SnapshotScope {
  const partition = partitionNumberOf(key);
  return partition === null ? { accounts: true, connections: 'none' } : { accounts: false, connections: { partition, partitions } };
}

/** Snapshots the partitions this node writes that are due (`all`: every one with log since its snapshot: a clean stop). */
export async function snapshotPartitions(
  cluster: ClusterNode,
  engine: Engine,
  config: Pick<Config, 'snapshotLogBytesMax' | 'snapshotIntervalMs' | 'clusterPartitions'>,
  { log, observer, all }: { log: LogLine; observer: Pick<ServiceObserver, 'snapshotWritten'>; all: boolean },
): Promise<void> {
  const intervalMs = Math.min(config.snapshotIntervalMs, PARTITION_SNAPSHOT_INTERVAL_MAX_MS);
  for (const key of cluster.store.writing()) {
    const partition = cluster.store.partition(key);
    const intervalPassed = performance.now() - partition.lastSnapshotAtMs >= intervalMs;
    if (key === ACCOUNTS_KEY && intervalPassed && partition.bytesSinceSnapshot === 0 && partition.writing && !engine.halted) {
      // quiet accounts (no login, no change): a message younger than the stream's max_age, and
      // the snapshot below covers it
      await engine.commit({ t: 'log.keepalive', atMs: Date.now() });
    }
    const bytes = partition.bytesSinceSnapshot;
    const due = bytes >= config.snapshotLogBytesMax || intervalPassed;
    if (bytes === 0 || !(all || due) || !partition.writing || engine.halted) continue;
    const snapshot = engine.takeSnapshot(scopeOf(key, config.clusterPartitions)); // in the same tick as the store seals the log position
    try {
      const written = await cluster.store.writePartitionSnapshot(key, snapshot);
      observer.snapshotWritten(written.bytes, written.durationMs);
      log(`snapshot of ${key} at seq ${written.seq}: ${written.bytes} bytes in ${Math.round(written.durationMs)} ms`, {
        partition: key,
        seq: written.seq,
        bytes: written.bytes,
        durationMs: Math.round(written.durationMs),
      });
    } finally {
      snapshot.release();
    }
  }
}
