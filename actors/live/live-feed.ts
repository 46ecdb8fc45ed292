/**
 * The half of the live stream that lives beside the connection actors: after each durable
 * change it turns the change into stream events (job -> Job list item, worker -> Worker,
 * queue -> Queue without metrics, a command made or settled -> the command with its
 * outcome), and it announces workers going offline by the 6 s rule
 * when it happens rather than on the next read. Where the events go is a `LiveSink`: the
 * stream hubs of the same thread (live-updates.ts), or, on a shard, the HTTP thread that
 * holds the hubs (docs/architecture.md, "Shards").
 */
import type { Clock } from '../clock.ts';
import type { Changes } from '../connection/connection-actor.ts';
import { effectiveWorkerState, type Worker } from '../connection/worker-store.ts';
import type { Engine, EngineListener } from '../engine.ts';
import type { StreamEventName } from '../stream/stream-hub.ts';
import { relationsOf } from '../connection/job-links.ts';
import { toJobListItem } from '../views/job-view.ts';
import { toQueueStreamItem } from '../views/queue-view.ts';
import { commandViewOf } from '../views/command-view.ts';
import { toWorkerView } from '../views/worker-view.ts';

/** Where a connection's live events go, and whether anyone wants them now. */
export interface LiveSink {
  /** Whether the connection's changes are to be built now: watched, or within the resume grace. */
  wants(connectionId: string, nowMs: number): boolean;
  /** Changes happened that nobody wanted: a resume from before them must not pass over them silently. */
  skipped(connectionId: string): void;
  publish(connectionId: string, event: StreamEventName, data: unknown): void;
}

export class LiveFeed implements EngineListener {
  private readonly announcedOffline = new WeakSet<Worker>();
  private closed = false;

  constructor(
    private readonly engine: Engine,
    private readonly clock: Clock,
    private readonly sink: LiveSink,
  ) {
    engine.listen(this);
  }

  changed(connectionId: string, changes: Changes): void {
    const actor = this.engine.connection(connectionId);
    if (actor === undefined || this.closed) return;
    const nowMs = this.clock.nowMs();
    if (!this.sink.wants(connectionId, nowMs)) {
      // Building and serializing every change cost ~9% of ingest with nobody watching.
      this.sink.skipped(connectionId);
      return;
    }
    for (const ref of changes.jobs) {
      // a job a later record removed meanwhile is gone: nothing to show
      const row = actor.jobs.table.rowOfRef(ref);
      if (row < 0) continue;
      const job = actor.jobs.readListed(row);
      this.sink.publish(connectionId, 'job', toJobListItem(job, actor.commandOutcomes.ofJob(job.id), relationsOf(actor.jobs, row)));
    }
    for (const worker of changes.workers) {
      this.announcedOffline.delete(worker);
      this.sink.publish(connectionId, 'worker', toWorkerView(worker, actor, nowMs));
    }
    for (const queue of changes.queues) this.sink.publish(connectionId, 'queue', toQueueStreamItem(queue, actor, nowMs));
    for (const commandId of changes.commands) {
      const command = commandViewOf(actor, commandId);
      if (command !== undefined) this.sink.publish(connectionId, 'command', command);
    }
  }

  /** Publishes each worker of `connectionIds` once when it passes the heartbeat timeout without saying so. */
  announceOfflineWorkers(connectionIds: Iterable<string>): void {
    const nowMs = this.clock.nowMs();
    for (const connectionId of connectionIds) {
      const actor = this.engine.connection(connectionId);
      if (actor === undefined) continue;
      if (!this.sink.wants(connectionId, nowMs)) continue; // announced to whoever subscribes later by their first read
      for (const worker of actor.workers.values()) {
        if (worker.state === 'offline' || this.announcedOffline.has(worker)) continue;
        if (effectiveWorkerState(worker, nowMs) !== 'offline') continue;
        this.announcedOffline.add(worker);
        this.sink.publish(connectionId, 'worker', toWorkerView(worker, actor, nowMs));
      }
    }
  }

  /** Later changes are not published. */
  close(): void {
    this.closed = true;
  }
}
