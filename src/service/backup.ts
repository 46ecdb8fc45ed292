/**
 * The online backup behind GET /api/admin/backup: a snapshot of the running service in the
 * data directory's own format, staged under DATA_DIR/backup-staging/. It waits for a running
 * snapshot and holds off the next while it writes, since the engine copies on write for one
 * capture at a time.
 */
import type { Engine } from '../../actors/engine.ts';
import { DomainError } from '../../actors/domain-error.ts';
import type { DurableStore } from '../../persistence/durable-store.ts';
import { backupStagingDir, writeBackup, type BackupFile } from '../backup/write-backup.ts';
import type { LogLine } from '../logging/log-line.ts';
import type { SnapshotSchedule } from './snapshot-schedule.ts';

export function backupTaker(engine: Engine, store: DurableStore, dataDir: string, snapshots: SnapshotSchedule, log: LogLine): () => Promise<BackupFile> {
  return async () => {
    await snapshots.whenIdle();
    if (engine.halted) throw new DomainError('SERVICE_UNAVAILABLE', 'the event log failed; no backup can be taken');
    const written = writeBackup(engine, store, backupStagingDir(dataDir));
    snapshots.hold(
      written.then(
        (file) => log(`backup at seq ${file.seq}: ${file.bytes} bytes`, { seq: file.seq, bytes: file.bytes }),
        (error) => log(`backup failed: ${String(error)}`, { severity: 'error' }),
      ),
    );
    return written;
  };
}
