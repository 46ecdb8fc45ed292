/**
 * The single writer of one partition's subject, with group commit and fencing.
 *
 * Every message is published with expect.lastSubjectSequence = the subject's last stream
 * sequence as this owner knows it, so only one publish can be in flight: while it is,
 * appended records queue and go out together as ONE message (a msgpack array of encoded
 * records) when its ack returns, like the local log's shared fdatasync. An append
 * resolves only after JetStream acknowledged its message, i.e. a quorum of the stream's
 * replicas stored it.
 *
 * - Refused with `wrong last sequence`: another owner appended to the subject (its owner
 *   marker, at least). This node is deposed: everything pending is rejected with
 *   DurabilityError, it logs `fenced: ...`, and accepts nothing more.
 * - No answer (a NATS server died, a stream leader election, a loaded machine): the same
 *   message is published again with the same msgID; if the first attempt was stored,
 *   JetStream's duplicate window answers with its sequence instead of storing it twice. A
 *   clustered stream may instead refuse the retry by the fence (the first attempt moved
 *   the subject past `expected`): then the subject's last message is read, and if it is
 *   this very message (same msgID) the retry is the first attempt's success, not a fence.
 */
import type { JetStreamClient, PubAck } from '@nats-io/jetstream';
import { DurabilityError, describeError } from '../persistence/errors.ts';
import { isWrongLastSequence, lastSequenceNamedBy } from './nats-errors.ts';
import type { LogWriterObserver } from '../persistence/log-writer.ts';
import { encodeValue } from '../persistence/record-codec.ts';

export interface FencedPublisherOptions {
  js: JetStreamClient;
  subject: string;
  node: string;
  epoch: number;
  /** The subject's last stream sequence when this owner starts writing. */
  lastSeq: number;
  /** Largest message the NATS servers accept; a group larger than this goes out as several messages. */
  maxPayloadBytes: number;
  log: (line: string) => void;
  /** How long one message may keep failing (no quorum) before the store gives up. */
  retryForMs?: number;
  /** Told of each group published (metrics, ingest timings): its records, bytes, and the time to the quorum's ack. */
  observer?: LogWriterObserver;
  /**
   * The subject's last message (its seq and msgID), read when a retry is refused by the
   * fence, to tell the first attempt's own message from another owner's; without it such a
   * refusal is a fence.
   */
  lastMessage?: () => Promise<{ seq: number; msgID: string | null } | null>;
}

/** Messages on a partition's subject: a group of records, or the marker a new owner writes. */
export type LogMessage = Uint8Array[] | { owner: { node: string; epoch: number } };

interface Group {
  records: Uint8Array[];
  bytes: number;
  sealed: boolean;
  done: Promise<number>;
  resolve(seq: number): void;
  reject(error: unknown): void;
}

const RETRY_FOR_MS_DEFAULT = 30_000;
const PUBLISH_TIMEOUT_MS = 5_000;
/** Room for msgpack's array and bin headers and the NATS headers of a message. */
const MESSAGE_OVERHEAD_BYTES = 4096;

/** A publish refused by the fence: another node wrote the partition since this one last did. */
export class FencedError extends DurabilityError {
  constructor(
    message: string,
    /** the subject's last sequence as the refusal named it; null when it named none */
    readonly lastSeqNamed: number | null,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export class FencedPublisher {
  private readonly queue: Group[] = [];
  private publishing = false;
  private failure: DurabilityError | undefined;
  private localSeq = 0;
  private lastSeqKnown: number;
  /** Payload bytes of every record acknowledged so far. */
  publishedBytes = 0;

  constructor(private readonly options: FencedPublisherOptions) {
    this.lastSeqKnown = options.lastSeq;
  }

  /** The stream sequence of the last message this owner knows is stored. */
  get lastSeq(): number {
    return this.lastSeqKnown;
  }

  /** Resolves with the stream sequence of the message that carried the record. */
  append(encoded: Uint8Array): Promise<number> {
    if (this.failure) return Promise.reject(this.failure);
    const limit = this.options.maxPayloadBytes - MESSAGE_OVERHEAD_BYTES;
    if (encoded.length > limit) {
      return Promise.reject(new DurabilityError(`a record of ${encoded.length} bytes is larger than one NATS message may be (${limit})`));
    }
    let group = this.queue.at(-1);
    if (group === undefined || group.sealed) {
      group = newGroup();
      this.queue.push(group);
    }
    group.records.push(encoded);
    group.bytes += encoded.length;
    void this.drain();
    return group.done;
  }

  /**
   * Resolves with the stream sequence that covers every record appended before this call
   * (records appended after it go into a later message). Snapshots use it.
   */
  sealed(): Promise<number> {
    if (this.failure) return Promise.reject(this.failure);
    const group = this.queue.at(-1);
    if (group !== undefined) {
      group.sealed = true;
      return group.done;
    }
    return Promise.resolve(this.lastSeqKnown);
  }

  /** Bytes of the records queued or in flight, not yet acknowledged. */
  get queuedBytes(): number {
    let bytes = 0;
    for (const group of this.queue) bytes += group.bytes;
    return bytes;
  }

  /** The marker a new owner appends after replaying, fenced on the sequence it replayed to; before any append. */
  async publishOwnerMarker(replayedTo: number): Promise<number> {
    const { node, epoch } = this.options;
    this.lastSeqKnown = replayedTo;
    const marker: LogMessage = { owner: { node, epoch } };
    return this.publishOne(encodeValue(marker));
  }

  /** Waits for everything queued to be acknowledged (or refused). */
  async flush(): Promise<void> {
    for (let last = this.queue.at(-1); last !== undefined; last = this.queue.at(-1)) await last.done.catch(() => undefined);
  }

  private async drain(): Promise<void> {
    if (this.publishing) return;
    this.publishing = true;
    try {
      for (let group = this.queue[0]; group !== undefined && !this.failure; group = this.queue[0]) {
        group.sealed = true;
        try {
          const seq = await this.publishGroup(group);
          this.queue.shift();
          this.publishedBytes += group.bytes;
          group.resolve(seq);
        } catch (error) {
          this.fail(error);
        }
      }
    } finally {
      this.publishing = false;
    }
  }

  /** One message, or several each fenced on the one before when the group is larger than a message may be. */
  private async publishGroup(group: Group): Promise<number> {
    const limit = this.options.maxPayloadBytes - MESSAGE_OVERHEAD_BYTES;
    const startedAtMs = performance.now();
    let seq = this.lastSeqKnown;
    for (let start = 0; start < group.records.length; ) {
      let end = start;
      for (let bytes = 0; end < group.records.length && bytes + group.records[end]!.length <= limit; end++) bytes += group.records[end]!.length;
      const message: LogMessage = group.records.slice(start, end);
      seq = await this.publishOne(encodeValue(message));
      start = end;
    }
    // the publish is the write and, once the quorum acked, the sync: reported as the write (no fdatasync here)
    this.options.observer?.batchWritten(group.records.length, group.bytes, performance.now() - startedAtMs);
    return seq;
  }

  private async publishOne(payload: Uint8Array): Promise<number> {
    const { js, subject, node, epoch, log } = this.options;
    this.localSeq += 1;
    // the subject too: one stream holds every partition, and its duplicate window spans them all
    const msgID = `${node}:${subject}:${epoch}:${this.localSeq}`;
    const expected = this.lastSeqKnown;
    const giveUpAtMs = performance.now() + (this.options.retryForMs ?? RETRY_FOR_MS_DEFAULT);
    for (let attempt = 1; ; attempt++) {
      let ack: PubAck;
      try {
        ack = await js.publish(subject, payload, { msgID, expect: { lastSubjectSequence: expected }, timeout: PUBLISH_TIMEOUT_MS });
      } catch (error) {
        const reason = describeError(error);
        if (isWrongLastSequence(error)) {
          const stored = attempt > 1 ? await this.storedEarlier(msgID) : null;
          if (stored !== null) {
            log(`published to ${subject} at seq ${stored} after ${attempt} attempts (the first had been stored; the retry was refused by the fence it had moved)`);
            this.lastSeqKnown = stored;
            return stored;
          }
          const message = `fenced: ${subject} has moved past seq ${expected} (${reason}); another node owns the partition now`;
          log(message);
          throw new FencedError(message, lastSequenceNamedBy(error), { cause: error });
        }
        if (performance.now() >= giveUpAtMs) {
          throw new DurabilityError(`publishing to ${subject} failed for ${attempt} attempts: ${reason}`, { cause: error });
        }
        if (attempt === 1) log(`publishing to ${subject} failed (${reason}); retrying with the same message id`);
        await Bun.sleep(Math.min(1_000, 50 * attempt));
        continue;
      }
      if (ack.duplicate && attempt === 1) {
        // Another message already carries this id: storing nothing and calling it done would lose the record.
        throw new DurabilityError(`message id ${msgID} was already used in ${subject} (seq ${ack.seq}); epochs must not repeat`);
      }
      if (attempt > 1) log(`published to ${subject} at seq ${ack.seq} after ${attempt} attempts${ack.duplicate ? ' (the first had been stored)' : ''}`);
      this.lastSeqKnown = ack.seq;
      return ack.seq;
    }
  }

  /**
   * The seq of `msgID` when it is the subject's last message: an earlier attempt that timed
   * out was stored after all. Null when another message is last (another owner's), or the
   * last message cannot be read (then the refusal stands: a fence is never waved through).
   */
  private async storedEarlier(msgID: string): Promise<number | null> {
    if (this.options.lastMessage === undefined) return null;
    try {
      const last = await this.options.lastMessage();
      return last !== null && last.msgID === msgID ? last.seq : null;
    } catch (error) {
      this.options.log(`reading the last message of ${this.options.subject} after a refused retry failed (${describeError(error)}): taking the refusal as a fence`);
      return null;
    }
  }

  private fail(error: unknown): void {
    this.failure = error instanceof DurabilityError ? error : new DurabilityError(describeError(error), { cause: error });
    for (const group of this.queue.splice(0)) group.reject(this.failure);
  }
}

function newGroup(): Group {
  let resolve!: (seq: number) => void;
  let reject!: (error: unknown) => void;
  const done = new Promise<number>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A rejection nobody awaits (a sealed group with no appender left) must not crash the process.
  done.catch(() => undefined);
  return { records: [], bytes: 0, sealed: false, done, resolve, reject };
}
