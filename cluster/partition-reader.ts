/**
 * Rebuilding one partition's state from NATS, shared by every node: the snapshot object,
 * then the subject's messages in order. The store uses it to recover at start and to
 * catch up at a takeover; the follower hands it every message that arrives afterwards.
 *
 * It never skips a message silently. Each message names the sequence it was fenced on
 * (its predecessor on the subject when it was admitted):
 * - a predecessor after the last one applied (or none) means the messages between were
 *   purged before this node read them (it fell behind a snapshot's purge): the state it
 *   holds can no longer be brought forward. FellBehindPurgeError, for the node to stop and
 *   rebuild from the snapshot on restart;
 * - a predecessor before the last one applied means JetStream admitted two messages
 *   fenced on the same sequence. nats-server 2.9 checks the fence before its raft
 *   proposal, not in it, so concurrent publishes can both pass (nats-server issue 4320;
 *   reproduced here on 2.9.10 by test/cluster/replica-store.test.ts). Nothing is missing
 *   then: every message of the subject up to here was applied, in the stream's order,
 *   which every node shares. The message is applied and the event logged.
 */
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { RecoveryRefusedError, describeError } from '../persistence/errors.ts';
import { decodeValue } from '../persistence/record-codec.ts';
import { TurnSlices } from '../persistence/turn-slices.ts';
import type { RecoveryHandler } from '../persistence/durable-store.ts';
import type { LogMessage } from './fenced-publisher.ts';
import { NotANatsFailure, retryingWhileNatsRecovers } from './retry.ts';
import type { SnapshotObjects, StoredSnapshot } from './snapshot-object.ts';
import { lastSubjectSeq, replaySubject, type SubjectMessage } from './subject-replay.ts';

export interface PartitionReaderOptions {
  js: JetStreamClient;
  jsm: JetStreamManager;
  stream: string;
  subject: string;
  /** Object name of the partition's snapshot. */
  snapshotName: string;
  snapshots: SnapshotObjects;
  log: (line: string) => void;
}

/** Applies one decoded record that is durable in the log (the engine's evolve at recovery, its applyReplicated afterwards). */
export type ApplyRecord = (record: unknown, seq: number) => void;

/** The messages after what this node applied were purged before it read them. */
export class FellBehindPurgeError extends NotANatsFailure {}

export class PartitionReader {
  /** The subject's sequence applied so far (records or an owner marker). */
  appliedSeq = 0;
  recordsApplied = 0;
  markersSkipped = 0;
  /** Payload bytes of the record messages applied since the snapshot this node last loaded or wrote. */
  bytesSinceSnapshot = 0;
  /** Bytes of snapshots loaded and record messages applied since the node started: what its replica parsed (the idle collection's measure of a burst). */
  bytesApplied = 0;
  /** Messages JetStream admitted on a fence another message had already passed (see above). */
  staleFences = 0;

  constructor(readonly options: PartitionReaderOptions) {}

  get subject(): string {
    return this.options.subject;
  }

  /**
   * Loads the newest snapshot object into `handler` (none: the subject is read from its
   * start). `beforeRestoring` runs once it is downloaded, before its first chunk is applied.
   */
  async loadSnapshot(
    handler: Pick<RecoveryHandler, 'snapshotChunk' | 'snapshotEnded'>,
    say: (line: string) => void,
    beforeRestoring?: (coveredSeq: number) => Promise<void>,
  ): Promise<StoredSnapshot | undefined> {
    const { stream, subject, snapshotName, snapshots } = this.options;
    const snapshot = await this.retrying(`reading snapshot ${snapshotName}`, () => snapshots.download(snapshotName), say);
    const snapshotSeq = snapshot?.coveredSeq ?? 0;
    await beforeRestoring?.(snapshotSeq);
    const lastSeq = await this.readLastSeq(say);
    if (lastSeq < snapshotSeq) {
      throw new RecoveryRefusedError(
        `refusing to start: snapshot ${snapshotName} covers seq ${snapshotSeq} but ${subject} ends at seq ${lastSeq}; ` +
          `the stream ${stream} was replaced or purged. Restore a backup; nothing was changed.`,
      );
    }
    if (snapshot) {
      say(`loaded snapshot ${snapshotName} covering seq ${snapshotSeq} (${snapshot.bytes} bytes)`);
      this.bytesApplied += snapshot.bytes;
      const slices = new TurnSlices();
      for (const [index, payload] of snapshot.chunkPayloads.entries()) {
        // a turn of the event loop between chunks: a node taking a partition up keeps renewing its leases
        await slices.next();
        readBack(`snapshot object ${snapshotName} chunk ${index + 1} of ${snapshot.chunkPayloads.length} (frame at offset ${snapshot.chunkOffsets[index]})`, () => handler.snapshotChunk(decodeValue(payload)));
      }
      if (handler.snapshotEnded !== undefined) readBack(`snapshot object ${snapshotName}`, () => handler.snapshotEnded!());
    } else {
      say(`no snapshot ${snapshotName} in the object store: replaying ${subject} from its start`);
    }
    this.appliedSeq = snapshotSeq;
    return snapshot;
  }

  readLastSeq(say: (line: string) => void): Promise<number> {
    const { jsm, stream, subject } = this.options;
    return this.retrying(`reading the last seq of ${subject}`, () => lastSubjectSeq(jsm, stream, subject), say);
  }

  /**
   * Applies the subject's messages after `appliedSeq` with a stream sequence up to `limit`
   * (any sequence of the stream: a take-up's bound, what the follower had passed over when
   * it began); the later ones are read past, not applied. A subject that ends before its last
   * sequence read at the start (purged meanwhile) is refused, as a gap is.
   */
  async replayUpTo(limit: number, apply: ApplyRecord, say: (line: string) => void): Promise<void> {
    const { js, stream, subject } = this.options;
    const lastSeq = await this.readLastSeq(say);
    let readTo = this.appliedSeq;
    if (lastSeq <= readTo) return;
    await this.retrying(
      `replaying ${subject} up to seq ${limit}`,
      () =>
        replaySubject(js, stream, subject, readTo + 1, lastSeq, (message) => {
          if (message.seq <= limit) this.apply(message, apply);
          readTo = message.seq;
        }),
      say,
    );
    if (readTo < lastSeq) throw new FellBehindPurgeError(`${subject} ended at seq ${readTo} while replaying to seq ${lastSeq}: the messages after it were purged`);
  }

  /** One message in subject order: a repeat (a consumer restarted) is ignored, a gap refused, a marker skipped. */
  apply(message: SubjectMessage, apply: ApplyRecord): void {
    const { subject } = this.options;
    if (message.seq <= this.appliedSeq) return;
    if (message.previousSeq !== undefined && message.previousSeq < this.appliedSeq) {
      this.staleFences += 1;
      this.options.log(
        `${subject} seq ${message.seq} was admitted fenced on seq ${message.previousSeq} although seq ${this.appliedSeq} was stored by then ` +
          '(the NATS server checked the fence outside its consensus); nothing is missing, applying it in stream order',
      );
    } else if (message.previousSeq !== this.appliedSeq) {
      throw new FellBehindPurgeError(
        `${subject} seq ${message.seq} follows seq ${message.previousSeq ?? '(no fence)'} but this node applied up to seq ${this.appliedSeq}: ` +
          `the messages between were purged (covered by a newer snapshot) before this node read them`,
      );
    }
    let decoded: LogMessage;
    try {
      decoded = decodeValue(message.data) as LogMessage;
      if (Array.isArray(decoded)) {
        for (const encoded of decoded) apply(decodeValue(encoded), message.seq);
        this.recordsApplied += decoded.length;
        this.bytesSinceSnapshot += message.data.length;
        this.bytesApplied += message.data.length;
      } else {
        this.markersSkipped += 1;
      }
    } catch (error) {
      // half a message may be applied: a retry would apply its first records twice
      throw new NotANatsFailure(`applying seq ${message.seq} of ${subject} (stream ${this.options.stream}) failed: ${describeError(error)}`, { cause: error });
    }
    this.appliedSeq = message.seq;
  }

  private retrying<T>(what: string, step: () => Promise<T>, say: (line: string) => void): Promise<T> {
    return retryingWhileNatsRecovers(what, step, say);
  }
}

/** A snapshot chunk msgpack cannot read, or one the engine refuses (its shape), stops the start naming the object and the chunk. */
function readBack(where: string, step: () => void): void {
  try {
    step();
  } catch (error) {
    throw new RecoveryRefusedError(`refusing to start: ${where}: ${describeError(error)}. Restore a backup; nothing was changed.`, { cause: error });
  }
}
