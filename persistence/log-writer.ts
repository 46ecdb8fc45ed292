import { join } from 'node:path';
import { DurabilityError, describeError } from './errors.ts';
import { segmentFileName } from './file-names.ts';
import { LOG_MAGIC, encodeFrame } from './frame.ts';
import { invariant } from './invariant.ts';
import type { Storage, StorageFile } from './storage.ts';

/**
 * The append side of the log: assigns sequence numbers, frames records, and writes
 * them to the current segment in call order through one serial queue.
 *
 * Group commit: an append joins the open batch at the end of the queue; while one
 * batch is being written (and, under `always`, synced) every append made meanwhile
 * lands in the next batch, which then costs one write and one fdatasync however many
 * callers it holds. Rotations and background syncs are barriers in the same queue, so
 * "every record before this point is in an older segment" needs no locks.
 */
export type FsyncPolicy = 'always' | 'everysec' | 'no';

export interface LogWriterOptions {
  dir: string;
  storage: Storage;
  fsync: FsyncPolicy;
  segmentBytesMax: number;
  log: (line: string, fields?: Record<string, unknown>) => void;
  lastSeq: number;
  /** The newest segment, when it ends exactly at lastSeq and appends may continue in it. */
  continueSegment: { path: string; firstSeq: number; sizeBytes: number } | undefined;
  /** Told of each group commit and sync, for metrics; none by default. */
  observer?: LogWriterObserver;
  /**
   * Told of each new segment once its name is durable, before any record in it is written
   * (the manifest records it, so a deleted newest segment is seen at the next start).
   */
  segmentCreated?: (firstSeq: number) => Promise<void>;
}

/** Called on the write path, after the I/O it describes: it must be cheap and must not throw. */
export interface LogWriterObserver {
  /** One group commit's write(): how many records it carried, its bytes, how long the write took. */
  batchWritten(records: number, bytes: number, writeMs: number): void;
  /** One fdatasync of the current segment and how long it took. */
  synced(syncMs: number): void;
}

/** One observer telling several (metrics and the ingest timings), or none. */
export function observeAll(observers: ReadonlyArray<LogWriterObserver | undefined>): LogWriterObserver | undefined {
  const present = observers.filter((observer) => observer !== undefined);
  if (present.length <= 1) return present[0];
  return {
    batchWritten: (records, bytes, writeMs) => {
      for (const observer of present) observer.batchWritten(records, bytes, writeMs);
    },
    synced: (syncMs) => {
      for (const observer of present) observer.synced(syncMs);
    },
  };
}

const EVERYSEC_INTERVAL_MS = 1000;

interface PendingAppend {
  seq: number;
  resolve: (seq: number) => void;
  reject: (error: Error) => void;
}

interface WriteBatch {
  kind: 'write';
  firstSeq: number;
  frames: Uint8Array[];
  sizeBytes: number;
  appends: PendingAppend[];
}

interface Barrier {
  kind: 'rotate' | 'sync';
  /** The sequence number the next record will get; a rotation names its new segment after it. */
  nextSeq: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

type QueuedWork = WriteBatch | Barrier;

interface OpenSegment {
  path: string;
  firstSeq: number;
  file: StorageFile;
  sizeBytes: number;
  unsyncedBytes: number;
}

export class LogWriter {
  private queue: QueuedWork[] = [];
  private draining = false;
  private failure: DurabilityError | undefined;
  private closing = false;
  private nextSeq: number;
  private acceptedBytes = 0;
  private backgroundSyncQueued = false;
  private readonly syncTimer: ReturnType<typeof setInterval> | undefined;

  private constructor(
    private readonly options: LogWriterOptions,
    private segment: OpenSegment,
  ) {
    this.nextSeq = options.lastSeq + 1;
    if (options.fsync === 'everysec') {
      this.syncTimer = setInterval(() => this.syncInBackground(), EVERYSEC_INTERVAL_MS);
      // Stryker disable next-line OptionalChaining: Bun's and Node's timers both have unref
    this.syncTimer.unref?.();
    }
  }

  static async open(options: LogWriterOptions): Promise<LogWriter> {
    const existing = options.continueSegment;
    const segment = existing
      ? { ...existing, file: await options.storage.openAppend(existing.path), unsyncedBytes: 0 }
      : await createSegment(options, options.lastSeq + 1);
    return new LogWriter(options, segment);
  }

  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  /** The first seq of the segment appends go to now. */
  get segmentFirstSeq(): number {
    return this.segment.firstSeq;
  }

  /** Frame bytes accepted since this writer opened, durable or not. */
  get acceptedBytesTotal(): number {
    return this.acceptedBytes;
  }

  /** Assigns the next seq now, so record order is call order; resolves once durable per the policy. */
  append(payload: Uint8Array): Promise<number> {
    const refusal = this.refusal();
    if (refusal) return Promise.reject(refusal);
    const seq = this.nextSeq++;
    const frame = encodeFrame(LOG_MAGIC, seq, payload);
    this.acceptedBytes += frame.length;
    return new Promise((resolve, reject) => {
      const batch = this.openBatch(seq);
      batch.frames.push(frame);
      batch.sizeBytes += frame.length;
      batch.appends.push({ seq, resolve, reject });
      this.scheduleDrain();
    });
  }

  /**
   * Resolves once every record appended before this call is synced in a segment that
   * receives nothing more, and later records go to a segment named after lastSeq + 1.
   */
  rotate(): Promise<void> {
    const refusal = this.refusal();
    return refusal ? Promise.reject(refusal) : this.enqueueBarrier('rotate');
  }

  /** Writes and syncs everything queued, stops the background sync, closes the segment. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    clearInterval(this.syncTimer);
    try {
      if (!this.failure) await this.enqueueBarrier('sync');
    } finally {
      await this.segment.file.close().catch(() => undefined);
    }
  }

  private refusal(): Error | undefined {
    if (this.failure) return this.failure;
    if (this.closing) return new Error('the durable store is closed');
    return undefined;
  }

  private openBatch(seq: number): WriteBatch {
    const last = this.queue.at(-1);
    if (last?.kind === 'write') return last;
    const batch: WriteBatch = { kind: 'write', firstSeq: seq, frames: [], sizeBytes: 0, appends: [] };
    this.queue.push(batch);
    return batch;
  }

  private enqueueBarrier(kind: Barrier['kind']): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ kind, nextSeq: this.nextSeq, resolve, reject });
      this.scheduleDrain();
    });
  }

  private scheduleDrain(): void {
    if (this.draining) return;
    this.draining = true;
    // One microtask later, so every append made in the current turn shares the first write.
    queueMicrotask(() => void this.drain());
  }

  private async drain(): Promise<void> {
    for (let work = this.queue.shift(); work; work = this.queue.shift()) {
      try {
        await this.perform(work);
      } catch (error) {
        this.fail(error, work);
      }
    }
    this.draining = false;
  }

  private async perform(work: QueuedWork): Promise<void> {
    switch (work.kind) {
      case 'write':
        return this.writeBatch(work);
      case 'rotate':
        if (this.segment.sizeBytes > 0) await this.switchSegment(work.nextSeq);
        // Stryker disable next-line ConditionalExpression,StringLiteral: an invariant that holds in correct code; only a bug elsewhere trips it
    invariant(this.segment.firstSeq === work.nextSeq, 'an empty current segment starts at the next seq');
        return work.resolve();
      case 'sync':
        await this.syncSegment();
        return work.resolve();
    }
  }

  private async writeBatch(batch: WriteBatch): Promise<void> {
    const segment = this.segment;
    if (segment.sizeBytes > 0 && segment.sizeBytes + batch.sizeBytes > this.options.segmentBytesMax) {
      await this.switchSegment(batch.firstSeq);
    }
    // Stryker disable next-line ConditionalExpression: concatenating a single frame copies it to the same bytes; skipping the copy is only faster
    const bytes = batch.frames.length === 1 ? batch.frames[0]! : Buffer.concat(batch.frames);
    const writeStartedMs = performance.now();
    await this.segment.file.append(bytes);
    this.options.observer?.batchWritten(batch.appends.length, bytes.length, performance.now() - writeStartedMs);
    this.segment.sizeBytes += bytes.length;
    this.segment.unsyncedBytes += bytes.length;
    if (this.options.fsync === 'always') await this.syncSegment();
    for (const pending of batch.appends) pending.resolve(pending.seq);
  }

  private async switchSegment(firstSeq: number): Promise<void> {
    // Even under `everysec` and `no`, an older segment is complete on disk before a
    // newer one holds a byte: recovery forgives damage only at the end of the newest.
    await this.syncSegment();
    await this.segment.file.close();
    this.segment = await createSegment(this.options, firstSeq);
  }

  private async syncSegment(): Promise<void> {
    if (this.segment.unsyncedBytes === 0) return;
    const syncStartedMs = performance.now();
    await this.segment.file.datasync();
    this.options.observer?.synced(performance.now() - syncStartedMs);
    this.segment.unsyncedBytes = 0;
  }

  private syncInBackground(): void {
    if (this.failure || this.closing || this.backgroundSyncQueued) return;
    if (this.segment.unsyncedBytes === 0 && this.queue.length === 0) return;
    this.backgroundSyncQueued = true;
    this.enqueueBarrier('sync')
      .catch(() => undefined) // fail() has already logged it and failed the store
      .finally(() => {
        this.backgroundSyncQueued = false;
      });
  }

  private fail(error: unknown, work: QueuedWork): void {
    const failure = new DurabilityError(
      `writing the log segment ${this.segment.path} failed (${describeError(error)}); ` +
        'nothing in flight was acknowledged and no later append is accepted: stop the process and restart it to recover',
      { cause: error },
    );
    this.failure = failure;
    clearInterval(this.syncTimer);
    this.options.log(failure.message, { severity: 'fatal' });
    for (const failed of [work, ...this.queue]) rejectWork(failed, failure);
    this.queue = [];
  }
}

async function createSegment({ storage, dir, segmentCreated }: LogWriterOptions, firstSeq: number): Promise<OpenSegment> {
  const path = join(dir, segmentFileName(firstSeq));
  // Stryker disable next-line StringLiteral: the message of an invariant that holds in correct code
  invariant(!(await storage.exists(path)), `log segment ${path} already exists`);
  const file = await storage.openAppend(path);
  // Without this a crash could drop the new name along with records already acknowledged in it.
  await storage.fsyncDir(dir);
  try {
    await segmentCreated?.(firstSeq);
  } catch (error) {
    await file.close().catch(() => undefined);
    throw error;
  }
  return { path, firstSeq, file, sizeBytes: 0, unsyncedBytes: 0 };
}

function rejectWork(work: QueuedWork, error: DurabilityError): void {
  if (work.kind === 'write') {
    for (const pending of work.appends) pending.reject(error);
  } else {
    work.reject(error);
  }
}
