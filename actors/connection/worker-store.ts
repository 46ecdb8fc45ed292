/**
 * Workers of one connection. Liveness follows the decisions: a worker whose last
 * heartbeat or event is more than 6 s old is `offline` on every read, whatever was
 * stored; a heartbeat brings an offline worker back to `online` without touching a
 * busy/idle state.
 */
import type { WorkerEvent } from '../ingest/normalized-event.ts';
import type { Framework, WorkerState } from '../ingest/states.ts';
import { assert } from '../domain-error.ts';
import { WorkerRate } from '../metrics/worker-metrics.ts';
import { ConsumerIndex } from './consumer-index.ts';

export const HEARTBEAT_TIMEOUT_MS = 6_000;

export interface Worker {
  id: string;
  connectionId: string;
  externalId: string;
  framework: Framework;
  hostname: string;
  pid: number | null;
  state: WorkerState;
  lastHeartbeatMs: number | null;
  lastEventMs: number;
  concurrency: number | null;
  reportedActiveJobs: number | null;
  queues: string[];
  metadata: Record<string, unknown>;
  createdAtMs: number;
  rate: WorkerRate;
  processedTotal: number;
}

export class WorkerStore {
  private readonly byExternalId = new Map<string, Worker>();
  private readonly consumers = new ConsumerIndex<Worker>();

  get size(): number {
    return this.byExternalId.size;
  }

  get(externalId: string): Worker | undefined {
    return this.byExternalId.get(externalId);
  }

  values(): IterableIterator<Worker> {
    return this.byExternalId.values();
  }

  delete(worker: Worker): void {
    this.byExternalId.delete(worker.externalId);
    this.consumers.update(worker, worker.queues, []);
  }

  insert(worker: Worker): void {
    this.byExternalId.set(worker.externalId, worker);
    this.consumers.update(worker, [], worker.queues);
  }

  /** Workers whose queue list names `queueName`, whatever their state. */
  listing(queueName: string): ReadonlySet<Worker> {
    return this.consumers.workersOf(queueName);
  }

  /** Workers listing `queueName` that are not offline at `nowMs`: the consumers fallback. */
  consumersOf(queueName: string, nowMs: number): number {
    let count = 0;
    for (const worker of this.listing(queueName)) if (effectiveWorkerState(worker, nowMs) !== 'offline') count++;
    return count;
  }

  applyEvent(connectionId: string, event: WorkerEvent): Worker {
    let worker = this.byExternalId.get(event.externalId);
    if (worker === undefined) {
      assert(event.newWorkerId !== undefined, 'a worker event that creates a worker carries its id');
      worker = {
        id: event.newWorkerId,
        connectionId,
        externalId: event.externalId,
        framework: event.framework,
        hostname: event.hostname,
        pid: null,
        state: event.state === 'heartbeat' ? 'online' : event.state,
        lastHeartbeatMs: null,
        lastEventMs: Number.NEGATIVE_INFINITY,
        concurrency: null,
        reportedActiveJobs: null,
        queues: [],
        metadata: {},
        createdAtMs: event.atMs,
        rate: new WorkerRate(),
        processedTotal: 0,
      };
      this.byExternalId.set(worker.externalId, worker);
    }
    const queuesBefore = worker.queues;
    mergeWorkerEvent(worker, event);
    // mergeWorkerEvent replaces the list, never edits it in place
    if (worker.queues !== queuesBefore) this.consumers.update(worker, queuesBefore, worker.queues);
    return worker;
  }
}

function mergeWorkerEvent(worker: Worker, event: WorkerEvent): void {
  const isNewest = event.atMs >= worker.lastEventMs;
  if (event.state === 'heartbeat') {
    worker.lastHeartbeatMs = Math.max(worker.lastHeartbeatMs ?? event.atMs, event.atMs);
    if (isNewest && worker.state === 'offline') worker.state = 'online';
  } else if (isNewest) {
    worker.state = event.state;
    if (event.state === 'online') worker.processedTotal = 0;
  }
  if (isNewest) {
    worker.lastEventMs = event.atMs;
    worker.hostname = event.hostname;
    worker.framework = event.framework;
  }
  const take = <K extends keyof Worker>(key: K, value: Worker[K] | undefined, isEmpty: boolean): void => {
    if (value !== undefined && (isNewest || isEmpty)) worker[key] = value;
  };
  take('pid', event.pid, worker.pid === null);
  take('concurrency', event.concurrency, worker.concurrency === null);
  take('reportedActiveJobs', event.activeJobs, worker.reportedActiveJobs === null);
  take('queues', event.queues, worker.queues.length === 0);
  take('metadata', event.metadata, Object.keys(worker.metadata).length === 0);
  worker.createdAtMs = Math.min(worker.createdAtMs, event.atMs);
}

export function livenessMs(worker: Worker): number {
  return Math.max(worker.lastHeartbeatMs ?? Number.NEGATIVE_INFINITY, worker.lastEventMs);
}

export function effectiveWorkerState(worker: Worker, nowMs: number): WorkerState {
  if (worker.state === 'offline') return 'offline';
  return nowMs - livenessMs(worker) > HEARTBEAT_TIMEOUT_MS ? 'offline' : worker.state;
}
