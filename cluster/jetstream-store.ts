/**
 * The DurableStore of cluster mode: the engine's log is one partition's subject of a
 * replicated JetStream stream and its snapshots are objects, so a record is durable
 * once a quorum of NATS servers stored it, and whichever node holds the partition's
 * lease can rebuild the engine from NATS alone.
 *
 * recover(): load the snapshot object (if any), replay the subject after the sequence it
 * covers, then append an owner marker fenced on the sequence replayed to. The marker
 * moves the subject past what any earlier owner expects, so a paused old owner that
 * resumes is refused by JetStream on its next write instead of writing after us. If the
 * marker is refused, an old owner appended after our replay (a write it may have
 * acknowledged): replay those messages too and try again.
 *
 * Sequences are stream sequences: append resolves with the sequence of the message that
 * carried the record, and a snapshot is named by the sequence it covers.
 */
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { DurabilityError, RecoveryRefusedError, describeError } from '../persistence/errors.ts';
import { invariant } from '../persistence/invariant.ts';
import { appendEncoded, decodeValue } from '../persistence/record-codec.ts';
import type { DurableStore, RecoveryHandler, RecoveryReport, SnapshotSource } from '../persistence/durable-store.ts';
import { FencedPublisher, type LogMessage } from './fenced-publisher.ts';
import type { SnapshotObjects } from './snapshot-object.ts';
import { NotANatsFailure, retryingWhileNatsRecovers } from './retry.ts';
import { lastSubjectSeq, replaySubject } from './subject-replay.ts';

export interface JetStreamStoreOptions {
  js: JetStreamClient;
  jsm: JetStreamManager;
  stream: string;
  subject: string;
  /** Object name of the partition's snapshot. */
  snapshotName: string;
  snapshots: SnapshotObjects;
  node: string;
  epoch: number;
  maxPayloadBytes: number;
  log: (line: string) => void;
}

/** An old owner that keeps writing after losing its lease is fenced by its first write; a few rounds are plenty. */
const MARKER_ATTEMPTS_MAX = 5;

export class JetStreamStore implements DurableStore {
  private publisher: FencedPublisher | undefined;
  private recoveryStarted = false;
  private snapshotInProgress: Promise<unknown> | undefined;
  private replayedBytes = 0;
  private publishedBytesAtSnapshot = 0;

  constructor(private readonly options: JetStreamStoreOptions) {}

  get lastSeq(): number {
    return this.publisher?.lastSeq ?? 0;
  }

  get logBytesSinceSnapshot(): number {
    if (!this.publisher) return 0;
    return this.replayedBytes + this.publisher.publishedBytes - this.publishedBytesAtSnapshot;
  }

  async recover(handler: RecoveryHandler): Promise<RecoveryReport> {
    invariant(!this.recoveryStarted, 'recover() is called once per store');
    this.recoveryStarted = true;
    const { js, jsm, stream, subject, snapshotName, snapshots, log } = this.options;
    const startedAtMs = performance.now();
    const lines: string[] = [];
    const say = (line: string): void => {
      lines.push(line);
      log(line);
    };

    const retrying = <T>(what: string, step: () => Promise<T>): Promise<T> => retryingWhileNatsRecovers(what, step, say);
    const snapshot = await retrying(`reading snapshot ${snapshotName}`, () => snapshots.download(snapshotName));
    const snapshotSeq = snapshot?.coveredSeq ?? 0;
    let replayedTo = snapshotSeq;
    let recordsReplayed = 0;
    let markersSkipped = 0;
    // Resumable: a retry after a NATS failure continues after the last message handed over.
    const replayTo = (toSeq: number): Promise<void> =>
      retrying(`replaying ${subject} to seq ${toSeq}`, () =>
        replaySubject(js, stream, subject, replayedTo + 1, toSeq, (seq, data) => {
          try {
            const message = decodeValue(data) as LogMessage;
            if (Array.isArray(message)) {
              for (const encoded of message) handler.record(decodeValue(encoded), seq);
              recordsReplayed += message.length;
              this.replayedBytes += data.length;
            } else {
              markersSkipped += 1;
            }
          } catch (error) {
            // half a message may be applied: a retry would apply its first records twice
            throw new NotANatsFailure(`replaying seq ${seq} of ${subject} failed: ${describeError(error)}`, { cause: error });
          }
          replayedTo = seq;
        }),
      ).then(() => {
        replayedTo = toSeq;
      });
    const readLastSeq = (): Promise<number> => retrying(`reading the last seq of ${subject}`, () => lastSubjectSeq(jsm, stream, subject));

    let lastSeq = await readLastSeq();
    if (lastSeq < snapshotSeq) {
      throw new RecoveryRefusedError(
        `refusing to start: snapshot ${snapshotName} covers seq ${snapshotSeq} but ${subject} ends at seq ${lastSeq}; ` +
          `the stream ${stream} was replaced or purged. Restore a backup; nothing was changed.`,
      );
    }
    if (snapshot) {
      say(`loaded snapshot ${snapshotName} covering seq ${snapshotSeq} (${snapshot.bytes} bytes)`);
      for (const payload of snapshot.chunkPayloads) handler.snapshotChunk(decodeValue(payload));
    } else {
      say(`no snapshot ${snapshotName} in the object store: replaying ${subject} from its start`);
    }
    await replayTo(lastSeq);

    const publisher = new FencedPublisher({ ...this.options, lastSeq });
    for (let attempt = 1; ; attempt++) {
      try {
        const markerSeq = await publisher.publishOwnerMarker(lastSeq);
        this.publisher = publisher;
        say(`owner marker at seq ${markerSeq} (node ${this.options.node}, epoch ${this.options.epoch})`);
        break;
      } catch (error) {
        if (!/^fenced/.test(describeError(error)) || attempt >= MARKER_ATTEMPTS_MAX) throw error;
        lastSeq = await readLastSeq();
        say(`${subject} grew to seq ${lastSeq} while replaying (the previous owner's last writes): replaying them too`);
        await replayTo(lastSeq);
      }
    }

    const durationMs = performance.now() - startedAtMs;
    say(
      `recovered from ${snapshot ? `snapshot ${snapshotName}` : 'no snapshot'} (seq ${snapshotSeq}) and ${recordsReplayed} log records ` +
        `of ${subject} (${markersSkipped} owner markers skipped) in ${Math.round(durationMs)} ms; last seq ${this.lastSeq}`,
    );
    return { snapshotSeq, recordsReplayed, truncatedBytes: 0, durationMs, lines };
  }

  append(record: unknown): Promise<number> {
    const publisher = this.publisher;
    if (!publisher) return Promise.reject(new Error('append() before recover() finished: recover first'));
    return appendEncoded(record, (payload) => publisher.append(payload));
  }

  async writeSnapshot(source: SnapshotSource): Promise<{ seq: number; bytes: number; durationMs: number }> {
    const publisher = this.publisher;
    invariant(publisher, 'writeSnapshot() before recover() finished');
    if (this.snapshotInProgress) throw new Error('a snapshot is already being written');
    // Same tick as the engine's takeSnapshot: the records appended so far, and no later one.
    const covered = publisher.sealed();
    const publishedBytesBefore = publisher.publishedBytes + this.pendingBytes();
    const written = this.writeSnapshotOnce(covered, publishedBytesBefore, source);
    this.snapshotInProgress = written.catch(() => undefined);
    try {
      return await written;
    } finally {
      this.snapshotInProgress = undefined;
    }
  }

  async close(): Promise<void> {
    await this.snapshotInProgress;
    await this.publisher?.flush();
  }

  /** Bytes queued but not yet acknowledged: the snapshot covers them too once the sealed group is acked. */
  private pendingBytes(): number {
    return this.publisher?.queuedBytes ?? 0;
  }

  private async writeSnapshotOnce(
    covered: Promise<number>,
    publishedBytesBefore: number,
    source: SnapshotSource,
  ): Promise<{ seq: number; bytes: number; durationMs: number }> {
    const { subject, snapshotName, snapshots, log } = this.options;
    const startedAtMs = performance.now();
    let seq = 0;
    try {
      seq = await covered;
      const bytes = await snapshots.upload(snapshotName, seq, source);
      this.replayedBytes = 0;
      this.publishedBytesAtSnapshot = publishedBytesBefore;
      await this.purgeCoveredBy(seq);
      return { seq, bytes, durationMs: performance.now() - startedAtMs };
    } catch (error) {
      source.chunks.return?.();
      log(`snapshot of ${subject} at seq ${seq} failed: ${describeError(error)}`);
      throw error instanceof DurabilityError ? error : new DurabilityError(describeError(error), { cause: error });
    }
  }

  /**
   * Only after the upload completed. The covered message itself stays: the subject must
   * never become empty, or its last sequence would read as 0 and fencing would compare
   * against the wrong value. A failure loses nothing: the next snapshot purges more.
   */
  private async purgeCoveredBy(seq: number): Promise<void> {
    const { jsm, stream, subject, log } = this.options;
    try {
      const purged = await jsm.streams.purge(stream, { filter: subject, seq });
      if (purged.purged > 0) log(`purged ${purged.purged} messages of ${subject} below seq ${seq} (covered by the snapshot)`);
    } catch (error) {
      log(`purging ${subject} below seq ${seq} failed (${describeError(error)}); the next snapshot retries`);
    }
  }
}
