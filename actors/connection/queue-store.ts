/**
 * Queues of one connection. A queue exists once a snapshot or a job naming it arrives;
 * depth, consumers and extensions come from the newest snapshot (fallbacks for depth and
 * consumers are computed at read). A snapshot that leaves out consumers or extensions keeps
 * what an earlier one said: an agent that does not report them says nothing about them.
 *
 * Whether the queue is paused comes from the job system: the newest snapshot's
 * `extensions.paused` (true or false), or a pause or resume the agent reported done, each
 * taking effect unless the other is newer (a snapshot by its event time, an outcome by the
 * time the service received it).
 */
import type { Framework } from '../ingest/states.ts';
import type { QueueEvent } from '../ingest/normalized-event.ts';
import { assert } from '../domain-error.ts';
import { QueueMetrics } from '../metrics/queue-metrics.ts';

export interface Queue {
  id: string;
  connectionId: string;
  name: string;
  framework: Framework;
  depth: number | null;
  consumers: number | null;
  /** the newest snapshot's framework-specific data, replaced whole; null until one carries it */
  extensions: Record<string, unknown> | null;
  /** paused in the job system; null until a snapshot or a command's outcome said */
  paused: boolean | null;
  /** when `paused` was last said (NEGATIVE_INFINITY: never) */
  pausedAtMs: number;
  lastSnapshotMs: number;
  /** newest event time naming the queue (snapshot, job, action on one of its jobs): retention reads it */
  lastSeenMs: number;
  createdAtMs: number;
  metrics: QueueMetrics;
}

export class QueueStore {
  private readonly byName = new Map<string, Queue>();
  private readonly byId = new Map<string, Queue>();

  get size(): number {
    return this.byName.size;
  }

  get(name: string): Queue | undefined {
    return this.byName.get(name);
  }

  getById(id: string): Queue | undefined {
    return this.byId.get(id);
  }

  values(): IterableIterator<Queue> {
    return this.byName.values();
  }

  insert(queue: Queue): void {
    this.byName.set(queue.name, queue);
    this.byId.set(queue.id, queue);
  }

  delete(queue: Queue): void {
    this.byName.delete(queue.name);
    this.byId.delete(queue.id);
  }

  /** The job system said at `atMs` whether the queue is paused; an older word never overrides a newer one. */
  sayPaused(queue: Queue, paused: boolean, atMs: number): boolean {
    if (atMs < queue.pausedAtMs) return false;
    const changed = queue.paused !== paused;
    queue.paused = paused;
    queue.pausedAtMs = atMs;
    return changed;
  }

  /** Something at `atMs` named the queue; an older event never moves it back. */
  touch(queue: Queue, atMs: number): void {
    if (atMs > queue.lastSeenMs) queue.lastSeenMs = atMs;
  }

  /** Creates the queue on first sight; `newQueueId` is decided before the record is logged. */
  ensure(connectionId: string, name: string, framework: Framework, atMs: number, newQueueId: string | undefined): Queue {
    let queue = this.byName.get(name);
    if (queue === undefined) {
      assert(newQueueId !== undefined, `an event that creates queue '${name}' carries its id`);
      queue = {
        id: newQueueId,
        connectionId,
        name,
        framework,
        depth: null,
        consumers: null,
        extensions: null,
        paused: null,
        pausedAtMs: Number.NEGATIVE_INFINITY,
        lastSnapshotMs: Number.NEGATIVE_INFINITY,
        lastSeenMs: atMs,
        createdAtMs: atMs,
        metrics: new QueueMetrics(),
      };
      this.insert(queue);
    }
    return queue;
  }

  applySnapshot(connectionId: string, event: QueueEvent): Queue {
    const queue = this.ensure(connectionId, event.name, event.framework, event.atMs, event.newQueueId);
    if (event.atMs >= queue.lastSnapshotMs) {
      queue.lastSnapshotMs = event.atMs;
      queue.depth = event.depth;
      queue.consumers = event.consumers ?? queue.consumers;
      queue.extensions = event.extensions ?? queue.extensions;
      queue.framework = event.framework;
      const paused = event.extensions?.paused;
      if (typeof paused === 'boolean') this.sayPaused(queue, paused, event.atMs);
    }
    queue.createdAtMs = Math.min(queue.createdAtMs, event.atMs);
    this.touch(queue, event.atMs);
    return queue;
  }
}
