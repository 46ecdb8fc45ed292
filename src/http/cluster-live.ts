/**
 * The live stream over connections a cluster node does not answer itself (docs/cluster.md,
 * "Reads across nodes"): their events are relayed by a node that keeps them, as a shard feeds
 * its front (src/shards/remote-live-sink.ts).
 *
 * - The node with a client's stream (`ClusterLiveFeed`) opens one internal stream per watched
 *   connection to the first node keeping its partition (CLUSTER_LIVE_PATH, signed): that node
 *   subscribes to the connection's hub like any stream (`LiveUpdates.relay`) and sends its
 *   events as Server-Sent Events; this node publishes each into its own hub, so a connection's
 *   events arrive in order (one stream, one keeper) and get this node's event ids.
 * - A relay that breaks (the keeper stopped, or no longer answers the partition) marks the
 *   connection's hub skipped, so a client resuming from before the gap is told to reset rather
 *   than miss events silently, and is opened again to the next keeper (after a pause while
 *   none will relay).
 * - When the last stream watching a connection ends, its relay is kept for the resume grace
 *   (STREAM_RESUME_GRACE_SECONDS), then closed.
 * - When partitions move, the front reconciles (`reconcile`, every second): a watched
 *   connection this node stopped answering gets a relay, one it answers again loses it.
 */
import type { RemoteLiveFeed } from '../../actors/live/live-updates.ts';
import type { StreamEventName } from '../../actors/stream/stream-hub.ts';
import type { LogLine } from '../logging/log-line.ts';
import type { ForwardTarget } from './forward-request.ts';
import { FORWARD_HEADER, signForward } from './forward-signature.ts';

/** The internal route a node asks a keeper for a connection's live events by; answered only with a valid signature. */
export const CLUSTER_LIVE_PATH = '/api/cluster/live';
/** Pause before a broken relay is opened again. */
const RELAY_RETRY_MS = 500;
/** How long `watch` waits for a keeper to start relaying before the stream opens anyway (its events follow when it does). */
const RELAY_OPEN_WAIT_MS = 3_000;
const STREAM_EVENTS = new Set<string>(['job', 'worker', 'queue', 'command']);

/** Where relayed events go: this node's hubs. */
export interface RelayedEvents {
  publish(connectionId: string, event: StreamEventName, data: unknown): void;
  relayGap(connectionId: string): void;
}

export interface ClusterLiveOptions {
  nodeId: string;
  secret: string;
  /** The nodes keeping the connection's partition, in the order to ask them (this node left out). */
  keepersOf(connectionId: string): ForwardTarget[];
  events(): RelayedEvents | undefined;
  log: LogLine;
}

export class ClusterLiveFeed implements RemoteLiveFeed {
  private readonly relays = new Map<string, Relay>();

  constructor(private readonly options: ClusterLiveOptions) {}

  async watch(connectionIds: readonly string[]): Promise<void> {
    const opened = connectionIds.map((id) => {
      let relay = this.relays.get(id);
      if (relay === undefined) {
        relay = new Relay(id, this.options, () => this.relays.delete(id));
        this.relays.set(id, relay);
      }
      relay.keep();
      return relay.opened;
    });
    await Promise.race([Promise.all(opened), Bun.sleep(RELAY_OPEN_WAIT_MS)]);
  }

  unwatch(connectionId: string, graceUntilMs: number): void {
    this.relays.get(connectionId)?.closeAt(graceUntilMs);
  }

  /** The keepers run the offline-worker check on their own timers, and their relays carry it. */
  announceOfflineWorkers(): void {}

  /**
   * After partitions moved: a watched connection this node no longer answers gets a relay, and
   * one it answers again loses its relay (its own feed builds the events now); either way the
   * switch is marked as a gap, since events may fall between the two.
   */
  reconcile(watched: readonly string[], fedElsewhere: (connectionId: string) => boolean): void {
    const events = this.options.events();
    for (const id of watched) {
      const relay = this.relays.get(id);
      if (relay === undefined && fedElsewhere(id)) {
        events?.relayGap(id);
        void this.watch([id]);
      } else if (relay !== undefined && !fedElsewhere(id)) {
        relay.close();
        events?.relayGap(id);
      }
    }
  }

  /** Every relay closed (the node stops). */
  close(): void {
    for (const relay of this.relays.values()) relay.close();
  }
}

class Relay {
  readonly opened: Promise<void>;
  private markOpened!: () => void;
  private readonly abort = new AbortController();
  private closeTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly connectionId: string,
    private readonly options: ClusterLiveOptions,
    private readonly onClosed: () => void,
  ) {
    this.opened = new Promise((resolve) => (this.markOpened = resolve));
    void this.run();
  }

  keep(): void {
    clearTimeout(this.closeTimer);
    this.closeTimer = undefined;
  }

  closeAt(untilMs: number): void {
    clearTimeout(this.closeTimer);
    this.closeTimer = setTimeout(() => this.close(), Math.max(0, untilMs - Date.now()));
    this.closeTimer.unref();
  }

  close(): void {
    clearTimeout(this.closeTimer);
    this.abort.abort();
    this.onClosed();
  }

  private async run(): Promise<void> {
    let said = '';
    while (!this.abort.signal.aborted) {
      let relayed = false;
      for (const keeper of this.options.keepersOf(this.connectionId)) {
        if (this.abort.signal.aborted) return;
        try {
          relayed = await this.relayFrom(keeper);
          if (relayed) break;
        } catch (error) {
          if (this.abort.signal.aborted) return;
          const why = `the live events of connection ${this.connectionId} from ${keeper.node} stopped (${error instanceof Error ? error.message : String(error)}); asking again`;
          if (why !== said) this.options.log(why, { severity: 'warn' });
          said = why;
        }
      }
      if (this.abort.signal.aborted) return;
      // nobody relays until the next try: what happens meanwhile is not seen here
      this.options.events()?.relayGap(this.connectionId);
      this.markOpened();
      await Bun.sleep(RELAY_RETRY_MS);
    }
  }

  /** Relays the keeper's events until its stream ends; false when it would not relay (it does not keep the connection). */
  private async relayFrom(keeper: ForwardTarget): Promise<boolean> {
    const path = `${CLUSTER_LIVE_PATH}?connectionId=${encodeURIComponent(this.connectionId)}`;
    const signature = signForward(this.options.secret, 'GET', path, { address: this.options.nodeId, host: '', https: false }, Date.now(), {});
    const answer = await fetch(keeper.url + path, { headers: { [FORWARD_HEADER]: signature }, signal: this.abort.signal, timeout: false } as RequestInit);
    if (answer.status !== 200 || answer.body === null) {
      await answer.body?.cancel();
      return false;
    }
    this.markOpened();
    const decoder = new TextDecoder();
    let pending = '';
    try {
      for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) {
        pending += decoder.decode(chunk, { stream: true });
        let end = pending.indexOf('\n\n');
        while (end >= 0) {
          this.deliver(pending.slice(0, end));
          pending = pending.slice(end + 2);
          end = pending.indexOf('\n\n');
        }
      }
    } finally {
      // what the keeper had not sent when its stream ended is gone, whoever relays next
      if (!this.abort.signal.aborted) this.options.events()?.relayGap(this.connectionId);
    }
    return true;
  }

  /** One message of the keeper's stream: an event into this node's hub; `reset` (the keeper's subscriber fell behind) as a gap. */
  private deliver(message: string): void {
    let event = '';
    let data = '';
    for (const line of message.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data += line.slice(6);
    }
    const events = this.options.events();
    if (events === undefined) return;
    if (event === 'reset') events.relayGap(this.connectionId);
    else if (STREAM_EVENTS.has(event)) events.publish(this.connectionId, event as StreamEventName, JSON.parse(data));
  }
}
