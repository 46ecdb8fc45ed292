/**
 * Queues of one connection. A queue exists once a snapshot or a job naming it arrives;
 * depth, consumers and extensions come from the newest snapshot (fallbacks for depth and
 * consumers are computed at read). A snapshot that leaves out consumers or extensions keeps
 * what an earlier one said: an agent that does not report them says nothing about them.
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
  lastSnapshotMs: number;
  /** newest event time naming the queue (snapshot, job, action on one of its jobs): retention reads it */
  lastSeenMs: number;
  createdAtMs: number;
  metrics: QueueMetrics;
}

export class QueueStore {
  private readonly byName = new Map<string, Queue>();

  get size(): number {
    return this.byName.size;
  }

  get(name: string): Queue | undefined {
    return this.byName.get(name);
  }

  values(): IterableIterator<Queue> {
    return this.byName.values();
  }

  insert(queue: Queue): void {
    this.byName.set(queue.name, queue);
  }

  delete(queue: Queue): void {
    this.byName.delete(queue.name);
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
        lastSnapshotMs: Number.NEGATIVE_INFINITY,
        lastSeenMs: atMs,
        createdAtMs: atMs,
        metrics: new QueueMetrics(),
      };
      this.byName.set(name, queue);
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
    }
    queue.createdAtMs = Math.min(queue.createdAtMs, event.atMs);
    this.touch(queue, event.atMs);
    return queue;
  }
}
