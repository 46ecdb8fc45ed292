/**
 * A hot replica's feed: after the node recovered a partition (snapshot and replay), an
 * ordered consumer keeps delivering the stream's new messages and each is applied as it
 * arrives, so the node's engine, views and live streams stay current without owning the
 * log. Owner markers are skipped; a message past a purge stops the follower (see
 * partition-reader.ts) and `onFatal` runs: the node must not go on serving a state that
 * silently misses records.
 *
 * An ordered consumer restarts itself after a missed heartbeat, but one that stalls
 * without noticing (seen after a long SIGSTOP of the node) would leave the replica stale
 * and never say so: every STALL_CHECK_MS the follower asks for the log's last sequence,
 * and if it stands beyond what was applied, with nothing applied since the previous
 * check, the consumer is made anew (the next message then shows whether a purge was missed).
 *
 * It follows a filter (in a node, `jobwatch.log.>`: every partition and the accounts, in
 * stream order, which is causal order) and asks `readerFor(subject)` which reader applies
 * a message; undefined (a partition this node writes itself) skips it. Positions are
 * stream sequences, so `waitApplied` answers "has this node seen everything up to the
 * writer's answer", and a takeover waits on it to catch up to its owner marker.
 */
import { DeliverPolicy, type ConsumerMessages, type JetStreamClient } from '@nats-io/jetstream';
import { describeError } from '../persistence/errors.ts';
import type { SubjectApplier } from './partition-log.ts';
import type { ApplyRecord } from './partition-reader.ts';
import { subjectMessage } from './subject-replay.ts';

export interface SubjectFollowerOptions {
  js: JetStreamClient;
  stream: string;
  /** What the consumer is filtered on: every subject of the log (`jobwatch.log.>`). */
  filter: string;
  /** What applies messages of `subject` (its reader, or a take-up holding them back); undefined: not followed here (skipped). */
  readerFor: (subject: string) => SubjectApplier | undefined;
  /** The stream sequence handed over so far (the readers' position after recovery). */
  fromSeq: number;
  /** The newest sequence of the filter in the stream (a NATS request; the stall check). */
  readLastSeq: () => Promise<number>;
  apply: ApplyRecord;
  log: (line: string) => void;
  /** A message could not be applied (fell behind a purge, or undecodable): the node must stop. */
  onFatal: (error: Error) => void;
}

/** A consumer that failed (NATS unreachable, stream leader moving) is made again after this. */
const RESUBSCRIBE_DELAY_MS = 250;
/**
 * How many messages a consumer asks for at a time. They may be in flight (in the server's
 * and the kernel's buffers) while the node is paused, so a node can resume with up to this
 * many messages that were sent before a purge removed them from the stream.
 */
export const FOLLOWER_PULL_MESSAGES = 512;
/** How often the follower checks that it is not stalled behind the log. */
export const STALL_CHECK_MS = 2_000;

interface Waiter {
  seq: number;
  resolve(applied: boolean): void;
}

export class SubjectFollower {
  private streamSeq: number;
  private newestSeenSeq: number;
  private messages: ConsumerMessages | undefined;
  /** Bumped whenever a consumer is ended: messages of an earlier generation are not applied. */
  private generation = 0;
  private endCurrent: () => void = () => undefined;
  private stopped = false;
  private failure: Error | undefined;
  private waiters: Waiter[] = [];
  private readonly stallTimer: ReturnType<typeof setInterval>;
  private seqAtLastCheck = -1;
  private checking = false;

  constructor(private readonly options: SubjectFollowerOptions) {
    this.streamSeq = options.fromSeq;
    this.newestSeenSeq = options.fromSeq;
    void this.follow();
    this.stallTimer = setInterval(() => void this.checkNotStalled(), STALL_CHECK_MS);
    this.stallTimer.unref();
  }

  /** The stream sequence applied (or skipped as not followed here) so far. */
  get appliedSeq(): number {
    return this.streamSeq;
  }

  /** The newest stream sequence this node has heard of: from the consumer, or from an owner's answer. */
  get lastKnownSeq(): number {
    return Math.max(this.newestSeenSeq, this.streamSeq);
  }

  /** Following and applying: false once stopped, or after a message it could not apply. */
  get following(): boolean {
    return !this.stopped && this.failure === undefined;
  }

  /** Resolves true once `seq` is applied, false after `timeoutMs` (or if the follower stopped first). */
  waitApplied(seq: number, timeoutMs: number): Promise<boolean> {
    this.newestSeenSeq = Math.max(this.newestSeenSeq, seq);
    if (this.streamSeq >= seq) return Promise.resolve(true);
    if (!this.following) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        seq,
        resolve: (applied) => {
          clearTimeout(timer);
          this.waiters = this.waiters.filter((other) => other !== waiter);
          resolve(applied);
        },
      };
      const timer = setTimeout(() => waiter.resolve(false), timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /**
   * Stops following. The readers' positions are final at once: a message is applied
   * synchronously, and only by a consumer of the current generation while not stopped.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.stallTimer);
    this.endConsumer();
    for (const waiter of [...this.waiters]) waiter.resolve(false);
  }

  /**
   * One consumer at a time (a generation); the loop makes the next when the current one
   * fails, ends, or is ended by the stall check. It never waits for an ended consumer to
   * finish closing: one whose connection went stale may take long, and it can deliver
   * nothing more (its generation is over).
   */
  private async follow(): Promise<void> {
    const { js, stream, filter, log } = this.options;
    let complainedAt = -1;
    while (!this.stopped && this.failure === undefined) {
      const ended = new Promise<void>((resolve) => {
        this.endCurrent = resolve;
      });
      try {
        const consumer = await js.consumers.get(stream, {
          filter_subjects: filter,
          deliver_policy: DeliverPolicy.StartSequence,
          opt_start_seq: this.streamSeq + 1,
        });
        const messages = await consumer.consume({ max_messages: FOLLOWER_PULL_MESSAGES });
        const generation = ++this.generation;
        this.messages = messages;
        const draining = (async () => {
          for await (const message of messages) {
            if (this.stopped || this.failure !== undefined || generation !== this.generation) return;
            this.handle(subjectMessage(message));
          }
        })();
        draining.catch(() => undefined); // a failure after the race below ended is the old generation's
        try {
          await Promise.race([draining, ended]);
        } finally {
          // whichever came first: nothing more of this consumer is applied, and it is closed
          if (this.messages === messages) this.endConsumer();
          else void messages.close().catch(() => undefined);
        }
      } catch (error) {
        if (this.stopped) return;
        if (complainedAt !== this.streamSeq) {
          complainedAt = this.streamSeq;
          log(`following ${filter} after seq ${this.streamSeq} failed (${describeError(error)}); subscribing again`);
        }
      }
      if (!this.stopped) await Bun.sleep(RESUBSCRIBE_DELAY_MS);
    }
  }

  /** Ends the current consumer's generation and closes it (not awaited); the loop makes the next unless stopped. */
  private endConsumer(): void {
    this.generation += 1;
    const messages = this.messages;
    this.messages = undefined;
    void messages?.close().catch(() => undefined);
    this.endCurrent();
  }

  private async checkNotStalled(): Promise<void> {
    if (this.checking || !this.following) return;
    this.checking = true;
    try {
      const lastSeq = await this.options.readLastSeq();
      this.newestSeenSeq = Math.max(this.newestSeenSeq, lastSeq);
      const stalled = lastSeq > this.streamSeq && this.streamSeq === this.seqAtLastCheck;
      this.seqAtLastCheck = this.streamSeq;
      if (stalled && this.following) {
        this.options.log(`following ${this.options.filter} stalled at seq ${this.streamSeq} while the log is at seq ${lastSeq}: subscribing again`);
        this.endConsumer();
      }
    } catch {
      // NATS unreachable: the consumer's own reconnects cover it; checked again next time
    } finally {
      this.checking = false;
    }
  }

  private handle(message: ReturnType<typeof subjectMessage>): void {
    if (message.seq <= this.streamSeq) return; // delivered again after the consumer was made anew
    try {
      this.options.readerFor(message.subject)?.apply(message, this.options.apply);
    } catch (error) {
      this.failure = error instanceof Error ? error : new Error(describeError(error));
      this.endConsumer();
      for (const waiter of [...this.waiters]) waiter.resolve(false);
      this.options.onFatal(new Error(`the replica of ${this.options.filter} stopped: ${this.failure.message}`, { cause: error }));
      return;
    }
    this.streamSeq = message.seq;
    this.newestSeenSeq = Math.max(this.newestSeenSeq, message.seq + message.pending);
    for (const waiter of [...this.waiters]) if (waiter.seq <= this.streamSeq) waiter.resolve(true);
  }
}
