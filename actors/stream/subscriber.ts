import { keepAliveCommentBytes } from './sse-wire-format.ts';

/** Why a subscription ended. */
export type SubscriberCloseReason =
  | 'cancelled' // the consumer cancelled the stream (e.g. the HTTP response was torn down)
  | 'aborted' // the caller's AbortSignal fired (e.g. request.signal on disconnect)
  | 'too-slow' // more than the byte budget was waiting for the consumer
  | 'hub-closed' // a watched hub closed (connection deleted, shutdown)
  | 'session-ended'; // the session that opened it ended (logout, expiry, user gone)

export interface SubscribeOptions {
  /** The Last-Event-ID header of a reconnecting client. */
  lastEventId?: string;
  signal?: AbortSignal;
  /** Called once, in a microtask, so that a throwing callback cannot break publish(). */
  onClose?: (reason: SubscriberCloseReason) => void;
}

/** The stream erroring with this is how a consumer learns it was cut off for falling behind. */
export class SubscriberTooSlowError extends Error {
  constructor(backlogBytes: number, bufferBytesMax: number) {
    super(`stream subscriber fell ${backlogBytes} bytes behind (budget ${bufferBytesMax}); reconnect with Last-Event-ID`);
    this.name = 'SubscriberTooSlowError';
  }
}

/**
 * The messages a hub published since its last flush, in order, and (once built) their
 * bytes joined. Every subscriber whose pending bytes are exactly these is handed the same
 * joined chunk: at 1,000 subscribers, a copy per subscriber per flush was measurable. The
 * chunk is read-only by contract: the HTTP layer only writes it out.
 */
export class PublishedRun {
  readonly messages: Uint8Array[] = [];
  bytes = 0;
  #joined: Uint8Array | null = null;

  add(message: Uint8Array): void {
    this.messages.push(message);
    this.bytes += message.byteLength;
  }

  get joined(): Uint8Array {
    this.#joined ??= concatenate(this.messages, this.bytes);
    return this.#joined;
  }
}

export interface SubscriberOptions {
  bufferBytesMax: number;
  /** Called synchronously, exactly once; the hubs use it to forget the subscriber at once. */
  onClose: (reason: SubscriberCloseReason) => void;
}

/**
 * One consumer's end of the live stream. Hubs queue encoded messages into it without
 * waiting; the hub's flush timer turns everything queued since the last flush into one
 * chunk. Its backlog is what was queued but not yet taken by the consumer: the pending
 * bytes plus the bytes sitting in the ReadableStream's queue, which a byte-length
 * strategy with a high-water mark of 0 reports as -desiredSize.
 */
export class Subscriber {
  readonly stream: ReadableStream<Uint8Array>;
  readonly #controller: ReadableStreamDefaultController<Uint8Array>;
  readonly #options: SubscriberOptions;
  #pendingChunks: Uint8Array[] = [];
  #pendingBytes = 0;
  /** the hub run whose first messages are exactly everything pending, or null (mixed, or nothing pending) */
  #pendingRun: PublishedRun | null = null;
  #queuedSinceKeepAliveTick = false;
  #closed = false;

  constructor(options: SubscriberOptions) {
    this.#options = options;
    let startController: ReadableStreamDefaultController<Uint8Array> | undefined;
    this.stream = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          startController = controller;
        },
        cancel: () => this.#finish('cancelled'),
      },
      new ByteLengthQueuingStrategy({ highWaterMark: 0 }),
    );
    // The streams standard runs start() inside the constructor.
    if (startController === undefined) throw new Error('ReadableStream did not call start() synchronously');
    this.#controller = startController;
  }

  get isClosed(): boolean {
    return this.#closed;
  }

  get backlogBytes(): number {
    return this.#pendingBytes + Math.max(0, -(this.#controller.desiredSize ?? 0));
  }

  /**
   * Adds bytes to the next flush; cuts the subscriber off when its backlog exceeds the
   * budget. A hub passes the run the bytes are the last message of (see PublishedRun).
   */
  queue(bytes: Uint8Array, run?: PublishedRun): void {
    if (this.#closed) return;
    const stillThatRun = run !== undefined && (this.#pendingChunks.length === 0 || this.#pendingRun === run) && run.messages.length === this.#pendingChunks.length + 1;
    this.#pendingRun = stillThatRun ? run : null;
    this.#pendingChunks.push(bytes);
    this.#pendingBytes += bytes.byteLength;
    this.#queuedSinceKeepAliveTick = true;
    if (this.backlogBytes > this.#options.bufferBytesMax) this.#cutOff();
  }

  /** Hands everything queued since the last flush to the stream as one chunk; `run`'s shared one when that is exactly it. */
  flush(run?: PublishedRun): void {
    if (this.#closed || this.#pendingBytes === 0) return;
    const shared = run !== undefined && this.#pendingRun === run && run.messages.length === this.#pendingChunks.length;
    const chunk = shared ? run.joined : concatenate(this.#pendingChunks, this.#pendingBytes);
    this.#pendingRun = null;
    this.#pendingChunks = [];
    this.#pendingBytes = 0;
    this.#controller.enqueue(chunk);
  }

  /**
   * Sends a keep-alive comment when nothing was queued since the previous tick, so an idle
   * stream gets one comment per tick and a busy one none. A stream that goes idle just
   * after a tick stays silent for up to two intervals.
   */
  keepAliveTick(): void {
    if (!this.#queuedSinceKeepAliveTick) {
      this.queue(keepAliveCommentBytes);
      this.flush();
    }
    this.#queuedSinceKeepAliveTick = false;
  }

  /** Ends the stream normally, after delivering what is still pending. */
  close(reason: 'aborted' | 'hub-closed' | 'session-ended'): void {
    if (this.#closed) return;
    this.flush();
    this.#controller.close();
    this.#finish(reason);
  }

  #cutOff(): void {
    // Erroring (rather than closing) drops the bytes already in the stream's queue at once,
    // and the HTTP layer resets the connection instead of trickling them to a stalled client.
    this.#controller.error(new SubscriberTooSlowError(this.backlogBytes, this.#options.bufferBytesMax));
    this.#finish('too-slow');
  }

  #finish(reason: SubscriberCloseReason): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#pendingChunks = [];
    this.#pendingBytes = 0;
    this.#pendingRun = null;
    this.#options.onClose(reason);
  }
}

/**
 * Always copies, even a single chunk: the chunks are shared with the hub's ring buffer, and
 * a stream chunk must not be a view of what the ring buffer keeps for resume.
 */
function concatenate(chunks: readonly Uint8Array[], totalBytes: number): Uint8Array {
  const joined = new Uint8Array(totalBytes);
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return joined;
}
