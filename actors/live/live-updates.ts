/**
 * Live updates: one stream hub per connection and the streams over them. The hubs are fed
 * by a `LiveFeed` (live-feed.ts) over this thread's engine, or, on a shard's front (the HTTP
 * thread), by the shards that keep the connections (`remoteFeed`), which build the events
 * and send them here. Publishing never waits on a client (see actors/stream).
 *
 * A stream lives only as long as the session that opened it and the access it was opened
 * with: it ends when that session is deleted (logout, a user disabled or removed, or
 * dropped as the user's oldest) or when the user may no longer read one of its connections
 * (a team membership or role changed), as soon as the record is applied, and when the
 * session expires by the next liveness check. The dashboard reconnects and gets what the
 * user may read now. A deleted connection ends the streams watching it (its hub closes).
 */
import { Access } from '../accounts/access.ts';
import type { Clock } from '../clock.ts';
import { DomainError } from '../domain-error.ts';
import type { Engine, EngineListener } from '../engine.ts';
import { StreamHub, type StreamEventName, type StreamHubOptions } from '../stream/stream-hub.ts';
import { subscribeMany, type StreamSubscription } from '../stream/subscribe-many.ts';
import type { SubscriberCloseReason } from '../stream/subscriber.ts';
import { LiveFeed, type LiveSink } from './live-feed.ts';

/**
 * The feed of a front whose connections live on shards: it tells them which connections are
 * watched, and they send the events (src/shards/).
 */
export interface RemoteLiveFeed {
  /**
   * Starts building the events of these connections; resolves once every change made before
   * this call has reached this thread (as events, or as `skipped`), so a resume planned after
   * it cannot pass over one.
   */
  watch(connectionIds: readonly string[]): Promise<void>;
  /** The connection's last subscriber left: its events are built until `graceUntilMs` (the resume grace), then not. */
  unwatch(connectionId: string, graceUntilMs: number): void;
  /** The offline-worker check now (the shards also run it on their own timer). */
  announceOfflineWorkers(): void;
}

export interface LiveUpdatesOptions {
  hub: Omit<StreamHubOptions, 'now' | 'eventIdSequence'>;
  livenessCheckIntervalMs: number;
  streamsPerUserMax: number;
  /**
   * How long a connection's events keep being built after its last subscriber left, so a
   * dashboard that reconnects within it resumes instead of refetching everything.
   */
  resumeGraceMs: number;
  /** Receives one line per stream a client left or was cut off from; nothing by default. */
  log?: (line: string) => void;
  /** Told why each stream ended (metrics); nothing by default. */
  onStreamEnd?: (reason: SubscriberCloseReason) => void;
  /** The connections are kept on shards, which feed the hubs; absent: this thread's engine does. */
  remoteFeed?: RemoteLiveFeed;
  /**
   * Some connections are fed by another node (a cluster node that does not keep their
   * partition, src/http/cluster-live.ts): their events come from `feed` and this engine's own
   * feed does not build them. `covers` is asked anew each time (partitions move).
   */
  elsewhere?: { covers(connectionId: string): boolean; feed: RemoteLiveFeed };
}

/** Who opened a stream: the user, and the key of the session that authorized it (its token hash). */
export interface StreamOwner {
  userId: string;
  sessionKey: string;
}

interface OpenStream {
  owner: StreamOwner;
  connectionIds: readonly string[];
  end(): void;
}

export class LiveUpdates implements EngineListener, LiveSink {
  private readonly hubs = new Map<string, StreamHub>();
  /** watched by users without connections, so every stream behaves alike (retry, keep-alive) */
  private readonly idleHub: StreamHub;
  /** this thread's engine feeding the hubs; absent when shards do (`remoteFeed`) */
  private readonly feed: LiveFeed | undefined;
  private readonly streamsPerUser = new Map<string, number>();
  private readonly openStreams = new Set<OpenStream>();
  /** When each unwatched connection lost its last subscriber, while its grace period runs. */
  private readonly lastSubscriberLeftAtMs = new Map<string, number>();
  private readonly livenessTimer: ReturnType<typeof setInterval>;
  private closed = false;

  constructor(
    private readonly engine: Engine,
    private readonly clock: Clock,
    private readonly options: LiveUpdatesOptions,
  ) {
    this.idleHub = new StreamHub(options.hub);
    // the feed listens first: a record's events are published before its deletion closes a hub
    this.feed = options.remoteFeed === undefined ? new LiveFeed(engine, clock, this) : undefined;
    engine.listen(this);
    this.livenessTimer = setInterval(() => {
      if (this.feed !== undefined) this.announceOfflineWorkers();
      this.endStreamsOfEndedSessions();
    }, options.livenessCheckIntervalMs);
    this.livenessTimer.unref();
  }

  /** LiveSink: whether the connection's changes are built now (watched, or within the grace period). */
  wants(connectionId: string, nowMs: number): boolean {
    if (this.closed || !this.buildsEvents(connectionId, this.hubFor(connectionId), nowMs)) return false;
    // a connection fed by another node: its hub carries that node's events, not this engine's
    return this.options.elsewhere?.covers(connectionId) !== true;
  }

  /** LiveSink: changes nobody wanted were not built. */
  skipped(connectionId: string): void {
    // a connection fed by another node: this engine's changes of it are not what its hub carries
    if (this.options.elsewhere?.covers(connectionId) === true) return;
    if (!this.closed) this.hubFor(connectionId).skipUnwatched();
  }

  /** Events another node relays were lost (its relay broke): a resume from before them resets. */
  relayGap(connectionId: string): void {
    if (!this.closed) this.hubFor(connectionId).skipUnwatched();
  }

  /** LiveSink: one event of a connection, from this thread's feed or from the shard keeping it. */
  publish(connectionId: string, event: StreamEventName, data: unknown): void {
    if (!this.closed) this.hubFor(connectionId).publish(event, data);
  }

  deleted(connectionId: string): void {
    this.hubs.get(connectionId)?.close();
    this.hubs.delete(connectionId);
    this.lastSubscriberLeftAtMs.delete(connectionId);
  }

  /** A session was deleted, a user or a team membership changed: the streams it ends, end now rather than at the next liveness check. */
  accountsChanged(): void {
    this.endStreamsOfEndedSessions();
  }

  /** Ends every stream whose session is no longer live (deleted, expired, or its user gone), or whose user may no longer read all its connections. */
  endStreamsOfEndedSessions(): void {
    const nowMs = this.clock.nowMs();
    for (const open of [...this.openStreams]) {
      const user = this.engine.accounts.sessionUser(open.owner.sessionKey, nowMs);
      const access = user?.id === open.owner.userId ? new Access(user, this.engine.accounts) : undefined;
      if (access === undefined || open.connectionIds.some((id) => access.connectionRole(id) === null)) {
        this.openStreams.delete(open);
        open.end();
      }
    }
  }

  /**
   * Before `subscribe` over connections kept on shards: waits until they build these
   * connections' events and every earlier change has arrived (RemoteLiveFeed.watch). Nothing
   * to wait for when this thread's engine feeds the hubs.
   */
  async prepare(connectionIds: readonly string[]): Promise<void> {
    const elsewhere = this.options.elsewhere;
    const fedElsewhere = elsewhere === undefined ? [] : connectionIds.filter((id) => elsewhere.covers(id));
    if (fedElsewhere.length > 0) await elsewhere!.feed.watch(fedElsewhere);
    const remote = this.options.remoteFeed;
    if (remote === undefined || connectionIds.length === 0) return;
    await remote.watch(connectionIds);
  }

  /**
   * The events of these connections for another node that streams them to its own clients
   * (cluster mode): a stream like a user's, but not counted against a user and not ended by a
   * session, since the node asking checks its own clients' sessions.
   */
  relay(connectionIds: string[], signal: AbortSignal): StreamSubscription {
    return subscribeMany(
      connectionIds.map((id) => this.hubFor(id)),
      { lastEventId: undefined, signal, onClose: () => this.startGracePeriods(connectionIds) },
    );
  }

  /** One stream over the given connections; at most `streamsPerUserMax` open per user. */
  subscribe(owner: StreamOwner, connectionIds: string[], lastEventId: string | undefined, signal: AbortSignal): StreamSubscription {
    const { userId } = owner;
    const open = this.streamsPerUser.get(userId) ?? 0;
    if (open >= this.options.streamsPerUserMax) {
      throw new DomainError('RATE_LIMITED', `at most ${this.options.streamsPerUserMax} live streams per user; close another first`);
    }
    const hubs = connectionIds.length === 0 ? [this.idleHub] : connectionIds.map((id) => this.hubFor(id));
    this.streamsPerUser.set(userId, open + 1);
    let opened: OpenStream | undefined;
    const onClose = (reason: SubscriberCloseReason): void => {
      if (opened !== undefined) this.openStreams.delete(opened);
      const remaining = (this.streamsPerUser.get(userId) ?? 1) - 1;
      if (remaining <= 0) this.streamsPerUser.delete(userId);
      else this.streamsPerUser.set(userId, remaining);
      this.startGracePeriods(connectionIds);
      this.options.onStreamEnd?.(reason);
      this.logStreamEnd(userId, connectionIds, reason);
    };
    const subscription = subscribeMany(hubs, { lastEventId, signal, onClose });
    opened = { owner, connectionIds, end: () => subscription.end() };
    this.openStreams.add(opened);
    return subscription;
  }

  /** The connections some stream watches now. */
  watchedConnectionIds(): string[] {
    return [...this.hubs].flatMap(([connectionId, hub]) => (hub.watched ? [connectionId] : []));
  }

  subscriberCount(): number {
    let count = this.idleHub.subscriberCount;
    for (const hub of this.hubs.values()) count += hub.subscriberCount;
    return count;
  }

  /** Streams open now, each counted once however many connections it covers. */
  openStreamCount(): number {
    let count = 0;
    for (const open of this.streamsPerUser.values()) count += open;
    return count;
  }

  /** Ends every stream (shutdown); later changes are not published. */
  close(): void {
    this.closed = true;
    clearInterval(this.livenessTimer);
    this.feed?.close();
    for (const hub of this.hubs.values()) hub.close();
    this.idleHub.close();
  }

  /** Publishes each worker once when it passes the heartbeat timeout without saying so. */
  announceOfflineWorkers(): void {
    if (this.feed === undefined) this.options.remoteFeed?.announceOfflineWorkers();
    else this.feed.announceOfflineWorkers([...this.hubs.keys()]);
    this.options.elsewhere?.feed.announceOfflineWorkers();
  }

  /** Whether changes of this connection are published: watched now, or within the grace period. */
  private buildsEvents(connectionId: string, hub: StreamHub, nowMs: number): boolean {
    if (hub.watched) return true;
    const leftAtMs = this.lastSubscriberLeftAtMs.get(connectionId);
    if (leftAtMs === undefined) return false;
    if (nowMs - leftAtMs < this.options.resumeGraceMs) return true;
    this.lastSubscriberLeftAtMs.delete(connectionId);
    return false;
  }

  private startGracePeriods(connectionIds: readonly string[]): void {
    if (this.closed) return;
    const nowMs = this.clock.nowMs();
    for (const connectionId of connectionIds) {
      const hub = this.hubs.get(connectionId);
      if (hub === undefined || hub.watched) continue;
      this.lastSubscriberLeftAtMs.set(connectionId, nowMs);
      this.options.remoteFeed?.unwatch(connectionId, nowMs + this.options.resumeGraceMs);
      if (this.options.elsewhere?.covers(connectionId) === true) this.options.elsewhere.feed.unwatch(connectionId, nowMs + this.options.resumeGraceMs);
    }
  }

  /**
   * One line, no stack trace: a client leaving or falling behind is routine, and the
   * operator needs who and why, not where in the code.
   */
  private logStreamEnd(userId: string, connectionIds: readonly string[], reason: SubscriberCloseReason): void {
    const why = streamEndExplanations[reason];
    if (why === null || this.options.log === undefined) return;
    const connections = connectionIds.length === 0 ? 'none' : connectionIds.join(',');
    const detail = reason === 'too-slow' ? ` (more than ${this.options.hub.subscriberBufferBytesMax} bytes behind; it may resume with Last-Event-ID)` : '';
    this.options.log(`stream of user ${userId} (connections ${connections}) ended: ${why}${detail}`);
  }

  private hubFor(connectionId: string): StreamHub {
    let hub = this.hubs.get(connectionId);
    if (hub === undefined) {
      hub = new StreamHub(this.options.hub);
      this.hubs.set(connectionId, hub);
    }
    return hub;
  }
}

/** What the log says for each way a stream ends; null: not worth a line (the service closed it). */
const streamEndExplanations: Record<SubscriberCloseReason, string | null> = {
  'too-slow': 'slow client cut off',
  cancelled: 'client went away',
  aborted: 'client went away',
  'hub-closed': null,
  'session-ended': 'its session or access ended (logout, expiry, the user disabled or removed, or a team membership changed)',
};
