import { newId } from '../ids.ts';
import type { EventError } from '../ingest/validate-event.ts';
import type { JobEvent, NormalizedEvent, QueueEvent } from '../ingest/normalized-event.ts';
import type { ConnectionActor } from './connection-actor.ts';

/**
 * Ids for records an ingest batch creates, decided once per new externalId/name, and
 * the per-connection bounds on how many queues and workers may exist: an event that
 * would create one past its bound is refused on its own, so names a client invents
 * cannot grow the connection without limit.
 */
export class BatchIds {
  private readonly jobs = new Map<string, string>();
  private readonly workers = new Map<string, string>();
  private readonly queues = new Map<string, string>();

  constructor(private readonly actor: Pick<ConnectionActor, 'jobs' | 'workers' | 'queues' | 'tenantLimits'>) {}

  /** Why the event may not be accepted because of the queue or worker bound, or null. */
  boundError(event: NormalizedEvent): EventError | null {
    // Stryker disable next-line ConditionalExpression: a worker event has no name, so read as a queue event it names no queue either
    const queueName = event.kind === 'job' ? event.queue : event.kind === 'queue' ? event.name : undefined;
    if (queueName !== undefined && this.isNewQueue(queueName)) {
      const max = this.actor.tenantLimits.queuesPerConnectionMax;
      if (this.actor.queues.size + this.queues.size >= max) {
        return { code: 'QUEUE_LIMIT_EXCEEDED', message: `the connection already has ${max} queues (QUEUES_PER_CONNECTION_MAX); queue '${queueName}' was not created` };
      }
    }
    if (event.kind === 'worker' && this.isNewWorker(event.externalId)) {
      const max = this.actor.tenantLimits.workersPerConnectionMax;
      if (this.actor.workers.size + this.workers.size >= max) {
        return { code: 'WORKER_LIMIT_EXCEEDED', message: `the connection already has ${max} workers (WORKERS_PER_CONNECTION_MAX); worker '${event.externalId}' was not created` };
      }
    }
    return null;
  }

  assign(event: NormalizedEvent): void {
    switch (event.kind) {
      case 'job': {
        if (this.actor.jobs.rowOfExternalId(event.externalId) < 0 && !this.jobs.has(event.externalId)) {
          event.newJobId = newId();
          this.jobs.set(event.externalId, event.newJobId);
        }
        if (event.queue !== undefined) this.assignQueue(event, event.queue);
        return;
      }
      case 'worker':
        if (this.isNewWorker(event.externalId)) {
          event.newWorkerId = newId();
          this.workers.set(event.externalId, event.newWorkerId);
        }
        return;
      case 'queue':
        return this.assignQueue(event, event.name);
    }
  }

  private isNewQueue(name: string): boolean {
    return this.actor.queues.get(name) === undefined && !this.queues.has(name);
  }

  private isNewWorker(externalId: string): boolean {
    return this.actor.workers.get(externalId) === undefined && !this.workers.has(externalId);
  }

  private assignQueue(event: JobEvent | QueueEvent, name: string): void {
    if (this.isNewQueue(name)) {
      event.newQueueId = newId();
      this.queues.set(name, event.newQueueId);
    }
  }
}
