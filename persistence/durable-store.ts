import { join } from 'node:path';
import { ManifestKeeper } from './data-dir-manifest.ts';
import { DurabilityError, RecoveryRefusedError, describeError } from './errors.ts';
import { parseDataFileName } from './file-names.ts';
import { invariant } from './invariant.ts';
import { LogWriter } from './log-writer.ts';
import type { FsyncPolicy, LogWriterObserver } from './log-writer.ts';
import { appendEncoded } from './record-codec.ts';
import { recoverDataDir } from './recovery.ts';
import type { RecoveryHandler, RecoveryReport } from './recovery.ts';
import { writeSnapshotFile } from './snapshot-file.ts';
import type { SnapshotSource } from './snapshot-file.ts';
import type { Storage } from './storage.ts';

/**
 * The durability layer the engine talks to: an append-only log of msgpack records in
 * framed segments, plus snapshots that let old segments go.
 *
 * What each fsync policy can lose (as in Redis):
 * - `always`: an append resolves only after fdatasync, so an acknowledged record
 *   survives a process crash and a power loss. Appends made while a write and sync are
 *   in flight share the next one (group commit), so latency is about one or two
 *   fdatasyncs while throughput is not bounded by them.
 * - `everysec`: an append resolves after write(); a timer fdatasyncs once per second.
 *   A process crash loses nothing acknowledged (the bytes are in the kernel); a power
 *   loss or kernel crash loses up to about the last second of acknowledged records.
 * - `no`: an append resolves after write() and the log is never synced on the append
 *   path; the kernel writes it back when it likes (typically within 30 s on Linux).
 *   A process crash loses nothing acknowledged; a power loss may lose everything the
 *   kernel had not written back.
 * Under every policy a segment is synced before the next one is started and a snapshot
 * is synced before it is named, so a power loss only ever leaves a torn tail at the end
 * of the newest segment, which recovery cuts back.
 *
 * A failed write or sync rejects every append in flight with DurabilityError and the
 * store accepts nothing more (after a failed fsync the page cache cannot be trusted, so
 * a retry could acknowledge lost data): the engine should stop the process, and the
 * restart recovers what reached the disk.
 */
export type { FsyncPolicy, LogWriterObserver } from './log-writer.ts';
export type { RecoveryHandler, RecoveryPhase, RecoveryReport } from './recovery.ts';
export type { SnapshotSource } from './snapshot-file.ts';
export { DurabilityError, RecoveryRefusedError };

export interface DurableStoreOptions {
  dir: string;
  storage: Storage;
  fsync: FsyncPolicy;
  /** Rotate log segments past this size (default 64 MiB). */
  segmentBytesMax?: number;
  /** Recovery and failure messages go here; `fields` are for a structured logger (`severity`: 'warn', 'error' or 'fatal' raises the level). */
  log: (line: string, fields?: Record<string, unknown>) => void;
  /** Told of each group commit and sync (metrics); none by default. */
  observer?: LogWriterObserver;
  /** Recovery's progress line at least this often during a long replay (default 1 s). */
  recoveryProgressEveryMs?: number;
}

export interface DurableStore {
  /** Call once, before any append. */
  recover(handler: RecoveryHandler): Promise<RecoveryReport>;
  /** Resolves with the record's seq once it is durable per the policy. */
  append(record: unknown): Promise<number>;
  writeSnapshot(source: SnapshotSource): Promise<{ seq: number; bytes: number; durationMs: number }>;
  /**
   * Keeps a fact about the directory that its records cannot show once they are lost (the
   * manifest's marks: `accounts` once a user exists); the next recovery's report lists it.
   * A store that keeps none (cluster mode) has no `mark`.
   */
  mark?(name: string): Promise<void>;
  readonly lastSeq: number;
  readonly logBytesSinceSnapshot: number;
  /** Writes and syncs what is pending, stops timers. */
  close(): Promise<void>;
}

const SEGMENT_BYTES_MAX_DEFAULT = 64 * 1024 * 1024;

export async function openDurableStore(opts: DurableStoreOptions): Promise<DurableStore> {
  const segmentBytesMax = opts.segmentBytesMax ?? SEGMENT_BYTES_MAX_DEFAULT;
  invariant(Number.isInteger(segmentBytesMax) && segmentBytesMax > 0, `segmentBytesMax ${segmentBytesMax} must be a positive integer`);
  await opts.storage.mkdirp(opts.dir);
  return new LogAndSnapshotStore(opts, segmentBytesMax);
}

class LogAndSnapshotStore implements DurableStore {
  private writer: LogWriter | undefined;
  private manifest: ManifestKeeper | undefined;
  private recoveryStarted = false;
  private snapshotInProgress: Promise<unknown> | undefined;
  /** Log bytes after the newest snapshot that recovery found on disk (the writer counts only its own). */
  private replayBytesAtOpen = 0;
  /** The writer's accepted-bytes count when the newest snapshot's rotation was queued. */
  private acceptedBytesAtSnapshot = 0;

  constructor(
    private readonly options: DurableStoreOptions,
    private readonly segmentBytesMax: number,
  ) {}

  get lastSeq(): number {
    return this.writer?.lastSeq ?? 0;
  }

  get logBytesSinceSnapshot(): number {
    if (!this.writer) return 0;
    return this.replayBytesAtOpen + this.writer.acceptedBytesTotal - this.acceptedBytesAtSnapshot;
  }

  async recover(handler: RecoveryHandler): Promise<RecoveryReport> {
    invariant(!this.recoveryStarted, 'recover() is called once per store');
    this.recoveryStarted = true;
    const { dir, storage, fsync, log } = this.options;
    const result = await recoverDataDir({ dir, storage, handler, log, progressEveryMs: this.options.recoveryProgressEveryMs });
    const manifest = new ManifestKeeper(storage, dir, result.manifest);
    this.manifest = manifest;
    this.writer = await LogWriter.open({
      dir,
      storage,
      fsync,
      log,
      observer: this.options.observer,
      segmentBytesMax: this.segmentBytesMax,
      lastSeq: result.lastSeq,
      continueSegment: result.continueSegment,
      segmentCreated: (firstSeq) => manifest.segmentCreated(firstSeq),
    });
    // a directory of an older version (no manifest), or a crash between a new segment and its manifest entry
    if (manifest.manifest.newestSegment !== this.writer.segmentFirstSeq) await manifest.segmentCreated(this.writer.segmentFirstSeq);
    this.replayBytesAtOpen = result.logBytesAfterSnapshot;
    return result.report;
  }

  mark(name: string): Promise<void> {
    if (!this.manifest) return Promise.reject(new Error('mark() before recover() finished: recover first'));
    return this.manifest.mark(name);
  }

  append(record: unknown): Promise<number> {
    const writer = this.writer;
    if (!writer) return Promise.reject(new Error('append() before recover() finished: recover first'));
    return appendEncoded(record, (payload) => writer.append(payload));
  }

  async writeSnapshot(source: SnapshotSource): Promise<{ seq: number; bytes: number; durationMs: number }> {
    const writer = this.writer;
    invariant(writer, 'writeSnapshot() before recover() finished');
    if (this.snapshotInProgress) throw new Error('a snapshot is already being written');
    const written = this.writeSnapshotOnce(writer, source);
    this.snapshotInProgress = written.catch(() => undefined);
    try {
      return await written;
    } finally {
      this.snapshotInProgress = undefined;
    }
  }

  async close(): Promise<void> {
    // A snapshot still being written finishes first: its rotation needs an open log.
    await this.snapshotInProgress;
    await this.writer?.close();
  }

  private async writeSnapshotOnce(
    writer: LogWriter,
    source: SnapshotSource,
  ): Promise<{ seq: number; bytes: number; durationMs: number }> {
    const startedAtMs = performance.now();
    // Taken synchronously: the snapshot covers exactly the records appended before this call.
    const seq = writer.lastSeq;
    const acceptedBytesBefore = writer.acceptedBytesTotal;
    try {
      await writer.rotate();
      const { path, bytes } = await writeSnapshotFile(this.options.storage, this.options.dir, seq, source);
      this.replayBytesAtOpen = 0;
      this.acceptedBytesAtSnapshot = acceptedBytesBefore;
      await this.removeFilesCoveredBy(seq, path);
      return { seq, bytes, durationMs: performance.now() - startedAtMs };
    } catch (error) {
      this.options.log(`snapshot at seq ${seq} failed: ${describeError(error)}`, { severity: 'error', seq });
      throw error instanceof DurabilityError ? error : new DurabilityError(describeError(error), { cause: error });
    }
  }

  /**
   * Runs only after the new snapshot is renamed and its directory synced (so the snapshot
   * survives a power loss).
   * The rotation before it means every segment named below seq + 1 holds only records
   * the snapshot covers. A failure here loses nothing: the next snapshot retries.
   */
  private async removeFilesCoveredBy(seq: number, snapshotPath: string): Promise<void> {
    const { storage, dir, log } = this.options;
    try {
      for (const name of await storage.list(dir)) {
        const parsed = parseDataFileName(name);
        const path = join(dir, name);
        const covered =
          (parsed?.kind === 'segment' && parsed.seq <= seq) || (parsed?.kind === 'snapshot' && path !== snapshotPath);
        if (covered) await storage.remove(path);
      }
      await storage.fsyncDir(dir);
    } catch (error) {
      log(`removing files covered by snapshot ${snapshotPath} failed (${describeError(error)}); the next snapshot retries`, { severity: 'warn' });
    }
  }
}
