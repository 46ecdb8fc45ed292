import { processEventIdSequence, type EventIdSequence } from './event-id-sequence.ts';
import { EventRingBuffer, type BufferedEvent } from './event-ring-buffer.ts';
import { encodeEventMessage, type StreamEventName } from './sse-wire-format.ts';
import { assertValidStreamHubOptions, type StreamHubOptions } from './stream-hub-options.ts';
import { subscribeMany, type StreamSubscription } from './subscribe-many.ts';
import { PublishedRun, type Subscriber, type SubscribeOptions } from './subscriber.ts';

export type { StreamEventName } from './sse-wire-format.ts';
export type { StreamHubOptions } from './stream-hub-options.ts';

type TimerHandle = ReturnType<typeof setTimeout>;

/**
 * The live stream of one tenant connection: its recent events for resume and the
 * subscribers watching it. Owned by the connection actor, so every call runs on that
 * actor's turn; nothing here waits on a client.
 *
 * Timers are per hub, not per subscriber: a flush timer armed by the first publish after
 * a flush, and a keep-alive interval that runs while anyone is subscribed. Both are
 * unref'd so they never hold a process (or a test run) open.
 */
export class StreamHub {
  readonly eventIdSequence: EventIdSequence;
  readonly subscriberBufferBytesMax: number;
  readonly #flushIntervalMs: number;
  readonly #keepAliveIntervalMs: number;
  readonly #now: () => number;
  readonly #recentEvents: EventRingBuffer;
  readonly #subscribers = new Set<Subscriber>();
  /** what was published since the last flush, joined once for the subscribers that had nothing else pending */
  #run = new PublishedRun();
  #flushTimer: TimerHandle | undefined;
  #flushQueued = false;
  #lastFlushAtMs = Number.NEGATIVE_INFINITY;
  #keepAliveTimer: TimerHandle | undefined;
  #closed = false;
  #eventsSkipped = false;

  constructor(options: StreamHubOptions) {
    assertValidStreamHubOptions(options);
    this.eventIdSequence = options.eventIdSequence ?? processEventIdSequence;
    this.subscriberBufferBytesMax = options.subscriberBufferBytesMax;
    this.#flushIntervalMs = options.flushIntervalMs;
    this.#keepAliveIntervalMs = options.keepAliveIntervalMs;
    this.#now = options.now ?? Date.now;
    // Any id issued before this hub existed cannot vouch for its events; see EventRingBuffer.
    this.#recentEvents = new EventRingBuffer(options.ringBufferEventsMax, options.ringBufferBytesMax, this.eventIdSequence.next(this.#now()));
  }

  get subscriberCount(): number {
    return this.#subscribers.size;
  }

  get isClosed(): boolean {
    return this.#closed;
  }

  /** Whether anyone is subscribed: publishers need not build events nobody would receive. */
  get watched(): boolean {
    return this.#subscribers.size > 0;
  }

  /**
   * Records that events happened but were not published (nobody was watching). A later
   * resume from an id before this point gets `reset` instead of a silent gap.
   */
  skipUnwatched(): void {
    if (this.#eventsSkipped) return;
    this.#eventsSkipped = true;
    // No resume can use the buffered events any more (see #settleSkippedEvents): free them now
    // rather than keep up to ringBufferBytesMax per connection nobody watches.
    this.#recentEvents.restartAt(this.eventIdSequence.next(this.#now()));
  }

  /** Encoded bytes kept for resume. */
  get bufferedBytes(): number {
    return this.#recentEvents.byteSize;
  }

  /** Serializes the event once, keeps it for resume, queues it for every subscriber; returns its id. */
  publish(event: StreamEventName, data: unknown): string {
    if (this.#closed) throw new Error('StreamHub.publish() after close()');
    this.#settleSkippedEvents();
    const id = this.eventIdSequence.next(this.#now());
    const bytes = encodeEventMessage(id, event, data);
    this.#recentEvents.append({ id, bytes });
    if (this.#subscribers.size > 0) {
      this.#run.add(bytes);
      for (const subscriber of this.#subscribers) subscriber.queue(bytes, this.#run);
    }
    this.#scheduleFlush();
    return id;
  }

  subscribe(options: SubscribeOptions = {}): StreamSubscription {
    return subscribeMany([this], options);
  }

  /** Ends every subscriber's stream after delivering what is pending; publish() then throws. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    // Closing a subscriber detaches it from this set; iterate over a copy.
    for (const subscriber of [...this.#subscribers]) subscriber.close('hub-closed');
    this.#stopKeepAlive();
  }

  // The members below are for subscriptions (subscribe-many.ts), not for the actor.

  /** See EventRingBuffer.eventsAfter. */
  eventsAfter(id: string): BufferedEvent[] | undefined {
    this.#settleSkippedEvents();
    return this.#recentEvents.eventsAfter(id);
  }

  #settleSkippedEvents(): void {
    if (!this.#eventsSkipped) return;
    this.#eventsSkipped = false;
    this.#recentEvents.restartAt(this.eventIdSequence.next(this.#now()));
  }

  attach(subscriber: Subscriber): void {
    this.#subscribers.add(subscriber);
    if (this.#keepAliveTimer === undefined) {
      this.#keepAliveTimer = setInterval(() => this.#sendKeepAlives(), this.#keepAliveIntervalMs);
      this.#keepAliveTimer.unref();
    }
  }

  detach(subscriber: Subscriber): void {
    this.#subscribers.delete(subscriber);
    if (this.#subscribers.size === 0) this.#stopKeepAlive();
  }

  /**
   * Adaptive: after a quiet interval the first publish flushes at the end of the current
   * turn (every event a durable batch publishes goes out in one chunk, without waiting for
   * a timer); while events keep coming, at most one flush per interval, so a busy stream
   * sends fewer, larger chunks.
   */
  #scheduleFlush(): void {
    if (this.#flushTimer !== undefined || this.#flushQueued || this.#subscribers.size === 0) return;
    const sinceLastFlushMs = performance.now() - this.#lastFlushAtMs;
    if (sinceLastFlushMs >= this.#flushIntervalMs) {
      this.#flushQueued = true;
      queueMicrotask(() => this.#flushSubscribers());
      return;
    }
    this.#flushTimer = setTimeout(() => this.#flushSubscribers(), this.#flushIntervalMs - sinceLastFlushMs);
    this.#flushTimer.unref();
  }

  #flushSubscribers(): void {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    this.#flushQueued = false;
    this.#lastFlushAtMs = performance.now();
    const run = this.#run;
    this.#run = new PublishedRun();
    for (const subscriber of this.#subscribers) subscriber.flush(run);
  }

  #sendKeepAlives(): void {
    for (const subscriber of this.#subscribers) subscriber.keepAliveTick();
  }

  #stopKeepAlive(): void {
    clearInterval(this.#keepAliveTimer);
    this.#keepAliveTimer = undefined;
  }
}
