/** The Queue shape of the interface, with fallbacks for depth and consumers and range metrics, and its controls. */
import type { ActionAvailability } from '../connection/action-availability.ts';
import { queueTargetKey, type QueueCommandType } from '../connection/command-types.ts';
import type { ConnectionActor } from '../connection/connection-actor.ts';
import { queueControls } from '../connection/control-availability.ts';
import type { Queue } from '../connection/queue-store.ts';
import type { HealthBucket, TimeRange } from '../metrics/queue-metrics.ts';
import { toControlView, type CommandView } from './command-view.ts';

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
  /** paused in the job system (its newest snapshot's `extensions.paused`, or a pause or resume the agent carried out); null: not said */
  paused: boolean | null;
  /** whether each control can work for the queue now, and why not (control-availability.ts) */
  controls: Record<QueueCommandType, ActionAvailability>;
  /** the queue's latest commands, newest first, and what became of them */
  commands: CommandView[];
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
    paused: queue.paused,
    ...queueCommandsOf(queue, actor),
    createdAt: new Date(queue.createdAtMs).toISOString(),
  };
}

function queueCommandsOf(queue: Queue, actor: ConnectionActor): Pick<QueueView, 'controls' | 'commands'> {
  const trail = actor.controlOutcomes.trailOf(queueTargetKey(queue.name));
  return {
    controls: queueControls(queue, trail, actor.supportOf),
    commands: trail.map((outcome) => toControlView(actor.connectionId, outcome)).reverse(),
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
