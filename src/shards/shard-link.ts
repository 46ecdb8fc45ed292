/**
 * The front's end of one shard: it starts the shard (a worker thread, or in tests a port in
 * the same thread), sends it requests with their bodies as they arrive and turns its answers
 * back into Responses, replicates the accounts records the front commits, passes its live
 * events to the front's hubs, and restarts it when it dies.
 *
 * A shard is `starting` (recovering its log), `ready`, or `down` (it crashed or its log
 * failed). Only a ready shard is sent requests; the others' connections are answered 503
 * with Retry-After by the front (shard-front.ts) until the shard is back, which it is after
 * `restartDelayMs` and its recovery: nothing it acknowledged is lost, since it acknowledged
 * only what its log had made durable.
 */
import type { SnapshotChunk } from '../../actors/engine-snapshot.ts';
import type { EngineRecord } from '../../actors/engine.ts';
import { DomainError } from '../../actors/domain-error.ts';
import type { StreamEventName } from '../../actors/stream/stream-hub.ts';
import type { ForwardedClient } from '../http/forward-signature.ts';
import type { FromShard, HeaderList, ShardCall, ShardPort, ShardRecoverySummary, StoreMark, ToShard } from './shard-protocol.ts';
import { SHARD_MERGE_HEADER } from './shard-protocol.ts';
import type { ShardHealth, ShardHealthState } from './shard-states.ts';

/** A started shard: its port, and how it ends. */
export interface ShardChannel {
  port: ShardPort;
  /** Resolves with why the shard ended (a worker's exit or error); never, for one in this thread that is not terminated. */
  ended: Promise<string>;
  /** Stops it (a worker is terminated) and resolves once it can no longer write. */
  terminate(): Promise<void>;
}

export type ShardState = 'starting' | 'ready' | 'down';

export interface ShardLinkEvents {
  /** the shard recovered and answers */
  ready(index: number, recovery: ShardRecoverySummary): void;
  /** the shard ended or halted; its connections' streams lose what was in flight */
  down(index: number, why: string, watched: readonly string[]): void;
  live(events: ReadonlyArray<[string, StreamEventName, unknown]>): void;
  skipped(connectionId: string): void;
  log(line: string, fields?: Record<string, unknown>): void;
}

export interface ShardLinkOptions {
  index: number;
  spawn: () => ShardChannel;
  /** The accounts as the front has them now, sent to a shard that starts. */
  accountsNow: () => SnapshotChunk[];
  events: ShardLinkEvents;
  /** First pause before a shard that died is started again; doubled up to 10 s while it keeps dying. */
  restartDelayMs: number;
}

/** Headers that belong to one hop, and the front's own: never passed to a shard from the client. */
const NOT_FORWARDED = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade', 'transfer-encoding', SHARD_MERGE_HEADER]);
const RESTART_DELAY_MAX_MS = 10_000;
/** A shard that stayed up this long has its restart pause reset to the first one. */
const STABLE_AFTER_MS = 30_000;

/** What the link reads of a client's body. */
interface ChunkReader {
  read(): Promise<{ done: true; value?: undefined } | { done: false; value: Uint8Array }>;
  cancel(): Promise<void>;
}

interface PendingRequest {
  resolve(response: Response): void;
  reject(error: unknown): void;
  /** the client's body being sent; cancelled when the shard answers first */
  body?: ChunkReader;
}

export class ShardLink {
  private channel: ShardChannel | undefined;
  private stateNow: ShardState = 'down';
  private nextId = 0;
  private readonly requests = new Map<number, PendingRequest>();
  private readonly calls = new Map<number, PromiseWithResolvers<unknown>>();
  /** what waits for the shard's `watched` or `applied` */
  private readonly watches = new Map<number, () => void>();
  /** the connections the front watches on this shard: watched again when it restarts */
  private readonly watched = new Set<string>();
  private restartDelayMs: number;
  private startedAtMs = 0;
  private stopped = false;
  /** Once ready, a shard that ends is started again; before that, it failing to start fails the service's start. */
  private everReady = false;
  private readonly readyWaiters: Array<{ resolve(): void; reject(error: Error): void }> = [];
  /** Why the front ended a shard itself (a halt, a test): said instead of how its thread ended. */
  private readonly endedBecause = new WeakMap<ShardChannel, string>();

  constructor(private readonly options: ShardLinkOptions) {
    this.restartDelayMs = options.restartDelayMs;
  }

  get index(): number {
    return this.options.index;
  }

  get state(): ShardState {
    return this.stateNow;
  }

  /**
   * Starts the shard; resolves once it is ready (its recovery done), rejects when it cannot
   * start (its store refuses recovery, as a single store would refuse the service's start).
   */
  start(): Promise<void> {
    const ready = new Promise<void>((resolve, reject) => this.readyWaiters.push({ resolve, reject }));
    this.launch();
    return ready;
  }

  private launch(): void {
    const channel = this.options.spawn();
    this.channel = channel;
    this.stateNow = 'starting';
    this.startedAtMs = Date.now();
    channel.port.addEventListener('message', (event) => this.receive(channel, event.data as FromShard));
    void channel.ended.then((why) => this.lost(channel, this.endedBecause.get(channel) ?? why));
    this.post({ t: 'start', accounts: this.options.accountsNow() });
    // what the front's streams watched before a restart is watched again, in order after the start
    if (this.watched.size > 0) this.post({ t: 'watch', ack: 0, connectionIds: [...this.watched] });
  }

  private post(message: ToShard, transfer?: ArrayBuffer[]): void {
    this.channel?.port.postMessage(message, transfer);
  }

  /**
   * An accounts record the front committed; resolves once the shard applied it (a shard that
   * is starting applies it after its start, in order; one that is down gets the accounts
   * whole when it starts again).
   */
  replicate(record: EngineRecord): Promise<void> {
    if (this.stateNow === 'down') return Promise.resolve();
    const ack = ++this.nextId;
    const applied = new Promise<void>((resolve) => this.watches.set(ack, resolve));
    this.post({ t: 'accounts', record, ack });
    return applied;
  }

  /**
   * The request answered by the shard; 503 (a DomainError) unless it is ready. `body`: sent
   * instead of the request's own (null: none); `merge`: the shard adds what a merge of
   * several shards' answers needs (shard-merge.ts).
   */
  request(request: Request, client: ForwardedClient, options: { body?: Uint8Array | null; merge?: boolean } = {}): Promise<Response> {
    if (this.stateNow !== 'ready') return Promise.reject(shardUnavailable(this.index, this.stateNow));
    const id = ++this.nextId;
    const answer = Promise.withResolvers<Response>();
    const pending: PendingRequest = { resolve: answer.resolve, reject: answer.reject };
    this.requests.set(id, pending);
    const headers: HeaderList = [];
    for (const [name, value] of request.headers) if (!NOT_FORWARDED.has(name)) headers.push([name, value]);
    if (options.merge === true) headers.push([SHARD_MERGE_HEADER, '1']);
    if (options.body !== undefined) {
      const length = headers.findIndex(([name]) => name === 'content-length');
      if (length >= 0) headers.splice(length, 1);
      if (options.body !== null) headers.push(['content-length', String(options.body.byteLength)]);
    }
    const hasBody = options.body === undefined ? request.body !== null : options.body !== null;
    this.post({ t: 'request', id, method: request.method, url: request.url, headers, client, hasBody });
    if (options.body === null) {
      // none sent: the route reads none
    } else if (options.body !== undefined) {
      // the same bytes may go to several shards: each gets its own copy
      this.sendChunk(id, options.body.slice());
      this.post({ t: 'bodyEnd', id });
    } else if (request.body !== null) {
      pending.body = request.body.getReader() as unknown as ChunkReader;
    }
    return answer.promise;
  }

  /** The next chunk of a request's body, read from the client because the shard's route reads on. */
  private async pull(id: number): Promise<void> {
    const reader = this.requests.get(id)?.body;
    if (reader === undefined) return;
    try {
      const { done, value } = await reader.read();
      if (this.requests.get(id)?.body !== reader) return;
      if (done) {
        this.requests.get(id)!.body = undefined;
        this.post({ t: 'bodyEnd', id });
      } else {
        this.sendChunk(id, value);
      }
    } catch (error) {
      if (this.requests.get(id)?.body === reader) this.post({ t: 'bodyAbort', id, reason: error instanceof Error ? error.message : String(error) });
    }
  }

  /** A chunk that owns its whole buffer is transferred; a view into a larger one is copied first. */
  private sendChunk(id: number, chunk: Uint8Array): void {
    const own = chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength && chunk.buffer instanceof ArrayBuffer ? chunk : chunk.slice();
    this.post({ t: 'body', id, chunk: own }, [own.buffer as ArrayBuffer]);
  }

  /** Starts the shard building these connections' live events; resolves once their earlier changes have arrived. */
  watch(connectionIds: readonly string[]): Promise<void> {
    for (const id of connectionIds) this.watched.add(id);
    if (this.stateNow === 'down') return Promise.resolve();
    const ack = ++this.nextId;
    const answered = new Promise<void>((resolve) => this.watches.set(ack, resolve));
    this.post({ t: 'watch', ack, connectionIds: [...connectionIds] });
    return answered;
  }

  unwatch(connectionId: string, graceUntilMs: number): void {
    this.watched.delete(connectionId);
    if (this.stateNow !== 'down') this.post({ t: 'unwatch', connectionId, graceUntilMs });
  }

  announceOfflineWorkers(): void {
    if (this.stateNow === 'ready') this.post({ t: 'announceOffline' });
  }

  /** A call answered by the shard (see ShardCall); rejects unless it is ready. */
  call(call: ShardCall): Promise<unknown> {
    if (this.stateNow !== 'ready') return Promise.reject(shardUnavailable(this.index, this.stateNow));
    const id = ++this.nextId;
    const answered = Promise.withResolvers<unknown>();
    this.calls.set(id, answered);
    this.post({ t: 'call', id, call });
    return answered.promise;
  }

  /** The shard's state for /api/health: a ready shard whose log failed (and is about to be restarted) is `halted`. */
  async health(): Promise<ShardHealth> {
    if (this.stateNow !== 'ready') return { shard: this.index, state: this.stateNow };
    const halted = await this.call({ what: 'health' }).then(
      (value) => (value as { halted: boolean }).halted,
      () => false,
    );
    // a shard that ended while asked is down now
    const state: ShardHealthState = halted ? 'halted' : this.stateNow;
    return { shard: this.index, state };
  }

  /** A clean stop: the shard snapshots and closes its log, then ends; it is not restarted. Null: it was not ready to. */
  async stop(): Promise<StoreMark | null> {
    this.stopped = true;
    const mark = this.stateNow === 'ready' ? ((await this.call({ what: 'stop' }).catch(() => null)) as StoreMark | null) : null;
    await this.channel?.terminate();
    this.stateNow = 'down';
    return mark;
  }

  /** Ends the shard as a crash would (tests of the front's fault handling). */
  async kill(why: string): Promise<void> {
    const channel = this.channel;
    if (channel === undefined) return;
    this.endedBecause.set(channel, why);
    await channel.terminate();
    this.lost(channel, why);
  }

  private receive(channel: ShardChannel, message: FromShard): void {
    if (channel !== this.channel) return;
    switch (message.t) {
      case 'ready':
        this.stateNow = 'ready';
        this.everReady = true;
        this.options.events.ready(this.index, message.recovery);
        for (const waiter of this.readyWaiters.splice(0)) waiter.resolve();
        return;
      case 'response': {
        const pending = this.requests.get(message.id);
        if (pending === undefined) return;
        this.requests.delete(message.id);
        void pending.body?.cancel().catch(() => undefined);
        const body = message.body.byteLength === 0 ? null : message.body;
        pending.resolve(new Response(body, { status: message.status, headers: message.headers }));
        return;
      }
      case 'bodyPull':
        return void this.pull(message.id);
      case 'bodyCancel': {
        const pending = this.requests.get(message.id);
        const reader = pending?.body;
        if (pending !== undefined) pending.body = undefined;
        void reader?.cancel().catch(() => undefined);
        return;
      }
      case 'live':
        return this.options.events.live(message.events);
      case 'skipped':
        return this.options.events.skipped(message.connectionId);
      case 'watched':
      case 'applied':
        this.watches.get(message.ack)?.();
        this.watches.delete(message.ack);
        return;
      case 'reply': {
        const call = this.calls.get(message.id);
        this.calls.delete(message.id);
        if (message.error === undefined) call?.resolve(message.value);
        else call?.reject(new Error(message.error));
        return;
      }
      case 'halted':
        if (!this.everReady) {
          // the first start failed: the service does not start, as with one store
          this.stopped = true;
          void channel.terminate();
          for (const waiter of this.readyWaiters.splice(0)) waiter.reject(new Error(`shard ${this.index} ${message.message}`));
          return;
        }
        this.options.events.log(`shard ${this.index} halted: ${message.message}; restarting it`, { severity: 'error', shard: this.index });
        this.endedBecause.set(channel, message.message);
        void channel.terminate().then(() => this.lost(channel, message.message));
        return;
      case 'log':
        return this.options.events.log(message.line, { ...message.fields, shard: this.index });
    }
  }

  /** The shard ended: what waited on it fails with 503, and it is started again after a pause. */
  private lost(channel: ShardChannel, why: string): void {
    if (channel !== this.channel) return;
    this.channel = undefined;
    this.stateNow = 'down';
    const unavailable = shardUnavailable(this.index, 'down');
    for (const pending of this.requests.values()) {
      void pending.body?.cancel().catch(() => undefined);
      pending.reject(unavailable);
    }
    this.requests.clear();
    for (const call of this.calls.values()) call.reject(unavailable);
    this.calls.clear();
    for (const resolve of this.watches.values()) resolve();
    this.watches.clear();
    if (this.stopped) return;
    this.options.events.down(this.index, why, [...this.watched]);
    if (Date.now() - this.startedAtMs > STABLE_AFTER_MS) this.restartDelayMs = this.options.restartDelayMs;
    const delay = this.restartDelayMs;
    this.restartDelayMs = Math.min(RESTART_DELAY_MAX_MS, this.restartDelayMs * 2);
    this.options.events.log(`shard ${this.index} ended (${why}); its connections answer 503 until it is back, starting it again in ${delay} ms`, {
      severity: 'error',
      shard: this.index,
    });
    setTimeout(() => {
      if (!this.stopped) this.launch();
    }, delay).unref();
  }
}

export function shardUnavailable(index: number, state: ShardState): DomainError {
  const why = state === 'starting' ? 'is starting (recovering its log)' : 'is down and being restarted';
  return new DomainError('SERVICE_UNAVAILABLE', `the shard keeping this connection (${index}) ${why}; retry shortly`, undefined, undefined, { 'retry-after': '1' });
}
