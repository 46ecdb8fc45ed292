/** The Queue shape of the interface, with fallbacks for depth and consumers and range metrics. */
import type { ConnectionActor } from '../connection/connection-actor.ts';
import type { Queue } from '../connection/queue-store.ts';
import type { HealthBucket, TimeRange } from '../metrics/queue-metrics.ts';

export interface QueueView {
  id: string;
  name: string;
  framework: string;
  connectionId: string;
  depth: number;
  consumers: number;
  throughput: number | null;
  avgLatencyMs: number | null;
  failureRate: number | null;
  healthBar: { timeRange: TimeRange; buckets: HealthBucket[] } | null;
  extensions: Record<string, unknown>;
  createdAt: string;
}

export type QueueStreamItem = Omit<QueueView, 'throughput' | 'avgLatencyMs' | 'failureRate' | 'healthBar'>;

/**
 * The stream's queue event: the queue without metrics. Depth and consumers come from
 * the newest snapshot; without one, from what the jobs and workers say.
 */
export function toQueueStreamItem(queue: Queue, actor: ConnectionActor, nowMs: number): QueueStreamItem {
  return {
    id: queue.id,
    name: queue.name,
    framework: queue.framework,
    connectionId: queue.connectionId,
    depth: queueDepth(queue, actor),
    consumers: queueConsumers(queue, actor, nowMs),
    extensions: queue.extensions ?? {},
    createdAt: new Date(queue.createdAtMs).toISOString(),
  };
}

/** The Queue of GET /api/queues: the stream item plus metrics over the range. */
export function toQueueView(queue: Queue, actor: ConnectionActor, range: TimeRange, nowMs: number): QueueView {
  const { throughput, avgLatencyMs, failureRate, healthBar } = queue.metrics.view(range, nowMs);
  return { ...toQueueStreamItem(queue, actor, nowMs), throughput, avgLatencyMs, failureRate, healthBar };
}

/** The newest snapshot's depth, else the jobs of the queue in `queued`. */
export function queueDepth(queue: Queue, actor: ConnectionActor): number {
  return queue.depth ?? actor.jobs.queuedPerQueue.get(queue.name);
}

/** The newest snapshot's consumers, else the workers listing the queue that are not offline. */
export function queueConsumers(queue: Queue, actor: ConnectionActor, nowMs: number): number {
  return queue.consumers ?? actor.workers.consumersOf(queue.name, nowMs);
}
