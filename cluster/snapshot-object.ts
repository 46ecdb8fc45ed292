/**
 * Snapshots of a partition in the jobwatch_snapshots object store, in the local
 * snapshot file format (persistence/snapshot-file.ts) so the same writer and the same
 * full verification apply: the file is written to a staging directory in DATA_DIR,
 * uploaded as `p.<n>` with the stream sequence it covers in its metadata, and on
 * recovery downloaded back into the staging directory and read with the checks a local
 * snapshot gets.
 */
import type { ObjectStore } from '@nats-io/obj';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RecoveryRefusedError } from '../persistence/errors.ts';
import { FileStorage } from '../persistence/file-storage.ts';
import { mkdirPrivate, PRIVATE_FILE_MODE } from '../persistence/private-files.ts';
import { readSnapshotFile, writeSnapshotFile, type SnapshotSource } from '../persistence/snapshot-file.ts';

const COVERED_SEQ = 'covered-seq';

export interface StoredSnapshot {
  coveredSeq: number;
  bytes: number;
  chunkPayloads: Uint8Array[];
  /** where each chunk's frame starts in the object */
  chunkOffsets: number[];
}

export class SnapshotObjects {
  private readonly storage = new FileStorage();

  constructor(
    private readonly objects: ObjectStore,
    private readonly stagingDir: string,
  ) {}

  /** Writes the snapshot file locally, uploads it, removes the local copy; returns its size. */
  async upload(name: string, coveredSeq: number, source: SnapshotSource): Promise<number> {
    const dir = await this.freshStagingDir();
    try {
      const { path, bytes } = await writeSnapshotFile(this.storage, dir, coveredSeq, source);
      const data = await this.storage.readFile(path);
      await this.objects.putBlob({ name, metadata: { [COVERED_SEQ]: String(coveredSeq) } }, data);
      return bytes;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** The sequence the stored snapshot covers (from its metadata alone), or undefined when there is none. */
  async coveredSeqOf(name: string): Promise<number | undefined> {
    const info = await this.objects.info(name);
    if (info === null || info.deleted) return undefined;
    const coveredSeq = Number(info.metadata?.[COVERED_SEQ]);
    return Number.isSafeInteger(coveredSeq) && coveredSeq >= 0 ? coveredSeq : undefined;
  }

  /** The verified snapshot, or undefined when none was ever uploaded. A damaged one refuses the start. */
  async download(name: string): Promise<StoredSnapshot | undefined> {
    const info = await this.objects.info(name);
    if (info === null || info.deleted) return undefined;
    const coveredSeq = Number(info.metadata?.[COVERED_SEQ]);
    if (!Number.isSafeInteger(coveredSeq) || coveredSeq < 0) {
      throw new RecoveryRefusedError(`snapshot object ${name} names no covered sequence (metadata ${JSON.stringify(info.metadata)})`);
    }
    const data = await this.objects.getBlob(name);
    if (data === null) throw new RecoveryRefusedError(`snapshot object ${name} vanished while it was read`);
    const dir = await this.freshStagingDir();
    try {
      const path = join(dir, name);
      await writeFile(path, data, { mode: PRIVATE_FILE_MODE });
      const read = await readSnapshotFile(this.storage, path, coveredSeq);
      if (read.kind === 'corrupt') {
        throw new RecoveryRefusedError(
          `refusing to start: snapshot object ${name} (covering seq ${coveredSeq}) is damaged: ${read.reason}. ` +
            'Restore a backup; nothing was changed.',
        );
      }
      return { coveredSeq, bytes: data.length, chunkPayloads: read.chunkPayloads, chunkOffsets: read.chunkOffsets };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  private async freshStagingDir(): Promise<string> {
    await mkdirPrivate(this.stagingDir);
    const dir = join(this.stagingDir, `${Date.now()}-${Math.random().toString(36).slice(2)}`);
    await mkdirPrivate(dir);
    return dir;
  }
}
