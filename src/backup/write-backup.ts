/**
 * An online backup: a snapshot of the running engine in the same file format the data
 * directory uses (`persistence/snapshot-file.ts`), written outside the log directory so
 * recovery and snapshot clean-up never see it. Restoring is placing it as the only file
 * of a new data directory's log (`restore-backup.ts`).
 *
 * Consistent like a regular snapshot: the log position and the engine's copy-on-write
 * capture are taken in the same tick, so the file is the state after exactly record
 * `seq` while ingest goes on.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Engine } from '../../actors/engine.ts';
import type { EngineSnapshot } from '../../actors/engine-snapshot.ts';
import type { DurableStore } from '../../persistence/durable-store.ts';
import { snapshotFileName } from '../../persistence/file-names.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { mkdirPrivate } from '../../persistence/private-files.ts';
import { writeSnapshotFile } from '../../persistence/snapshot-file.ts';

export interface BackupFile {
  path: string;
  /** the file name a restore expects (the snapshot name of its seq) */
  name: string;
  seq: number;
  bytes: number;
}

/** Where backups are staged while they are sent, each in its own directory. */
export function backupStagingDir(dataDir: string): string {
  return join(dataDir, 'backup-staging');
}

/** At start-up: backups staged by a process that died while sending them. */
export async function clearBackupStaging(dataDir: string): Promise<void> {
  await rm(backupStagingDir(dataDir), { force: true, recursive: true });
}

/** After the backup was sent (or failed to be). */
export async function discardBackup(backup: BackupFile): Promise<void> {
  await rm(dirname(backup.path), { force: true, recursive: true });
}

/** Must not run while another snapshot of `engine` is being written (one copy-on-write at a time). */
export async function writeBackup(engine: Engine, store: DurableStore, stagingDir: string): Promise<BackupFile> {
  // Same tick: the snapshot is the state after exactly `seq`.
  const seq = store.lastSeq;
  return writeBackupOf(engine.takeSnapshot(), seq, stagingDir);
}

/** `snapshot` as a backup file named for `seq` (the sequence a store restored from it continues after); releases it. */
export async function writeBackupOf(snapshot: EngineSnapshot, seq: number, stagingDir: string): Promise<BackupFile> {
  try {
    await mkdirPrivate(stagingDir);
    const dir = await mkdtemp(join(stagingDir, 'backup-')); // 0700; the file in it 0600 (FileStorage)
    const { path, bytes } = await writeSnapshotFile(new FileStorage(), dir, seq, snapshot);
    return { path, name: snapshotFileName(seq), seq, bytes };
  } finally {
    snapshot.release();
  }
}
