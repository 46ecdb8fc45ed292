import { newId } from '../ids.ts';
import type { JobEvent, NormalizedEvent, QueueEvent } from '../ingest/normalized-event.ts';
import type { ConnectionActor } from './connection-actor.ts';

/** Ids for records an ingest batch creates, decided once per new externalId/name. */
export class BatchIds {
  private readonly jobs = new Map<string, string>();
  private readonly workers = new Map<string, string>();
  private readonly queues = new Map<string, string>();

  constructor(private readonly actor: Pick<ConnectionActor, 'jobs' | 'workers' | 'queues'>) {}

  assign(event: NormalizedEvent): void {
    switch (event.kind) {
      case 'job': {
        if (this.actor.jobs.getByExternalId(event.externalId) === undefined && !this.jobs.has(event.externalId)) {
          event.newJobId = newId();
          this.jobs.set(event.externalId, event.newJobId);
        }
        if (event.queue !== undefined) this.assignQueue(event, event.queue);
        return;
      }
      case 'worker':
        if (this.actor.workers.get(event.externalId) === undefined && !this.workers.has(event.externalId)) {
          event.newWorkerId = newId();
          this.workers.set(event.externalId, event.newWorkerId);
        }
        return;
      case 'queue':
        return this.assignQueue(event, event.name);
    }
  }

  private assignQueue(event: JobEvent | QueueEvent, name: string): void {
    if (this.actor.queues.get(name) === undefined && !this.queues.has(name)) {
      event.newQueueId = newId();
      this.queues.set(name, event.newQueueId);
    }
  }
}
