/**
 * A shard's side of the live stream: the front holds the hubs and says which connections
 * are watched (`watch`, `unwatch` with the resume grace's end); the shard's LiveFeed builds those connections' events
 * and this sends them to the front, every event of one turn in one message, in the order
 * they were published (a connection lives on one shard and one port keeps the order, so a
 * stream gets each connection's events in order). Changes of a connection nobody watches are
 * not built; the front is told once (`skipped`) so that a resume from before them resets.
 */
import type { LiveSink } from '../../actors/live/live-feed.ts';
import type { StreamEventName } from '../../actors/stream/stream-hub.ts';
import type { FromShard } from './shard-protocol.ts';

export class RemoteLiveSink implements LiveSink {
  private readonly watched = new Set<string>();
  /** connections no longer watched whose events are built until then (the front's resume grace) */
  private readonly graceUntilMs = new Map<string, number>();
  /** connections whose skip the front was told of since they were last watched */
  private readonly toldSkipped = new Set<string>();
  private pending: Array<[string, StreamEventName, unknown]> = [];

  constructor(private readonly send: (message: FromShard) => void) {}

  wants(connectionId: string, nowMs: number): boolean {
    if (this.watched.has(connectionId)) return true;
    const until = this.graceUntilMs.get(connectionId);
    if (until === undefined) return false;
    if (nowMs < until) return true;
    this.graceUntilMs.delete(connectionId);
    return false;
  }

  skipped(connectionId: string): void {
    if (this.toldSkipped.has(connectionId)) return;
    this.toldSkipped.add(connectionId);
    // after what was published before: the front sees the events, then the gap
    this.flush();
    this.send({ t: 'skipped', connectionId });
  }

  publish(connectionId: string, event: StreamEventName, data: unknown): void {
    if (this.pending.length === 0) queueMicrotask(() => this.flush());
    this.pending.push([connectionId, event, data]);
  }

  /** The front watches these connections now; answered once everything before is on its way. */
  watch(connectionIds: readonly string[], ack: number): void {
    for (const id of connectionIds) {
      this.watched.add(id);
      this.graceUntilMs.delete(id);
      this.toldSkipped.delete(id);
    }
    this.flush();
    this.send({ t: 'watched', ack });
  }

  unwatch(connectionId: string, graceUntilMs: number): void {
    this.watched.delete(connectionId);
    this.graceUntilMs.set(connectionId, graceUntilMs);
  }

  /** Watched, or within their grace: the connections whose workers going offline are announced. */
  wantedConnectionIds(): string[] {
    return [...new Set([...this.watched, ...this.graceUntilMs.keys()])];
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const events = this.pending;
    this.pending = [];
    this.send({ t: 'live', events });
  }
}
