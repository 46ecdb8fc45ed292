/** The Worker shape of the interface, with liveness applied at read time, and its controls. */
import { isoOrNull } from '../clock.ts';
import type { ActionAvailability } from '../connection/action-availability.ts';
import { workerTargetKey, type WorkerCommandType } from '../connection/command-types.ts';
import type { ConnectionActor } from '../connection/connection-actor.ts';
import { workerControls } from '../connection/control-availability.ts';
import { effectiveWorkerState, livenessMs, type Worker } from '../connection/worker-store.ts';
import { toControlView, type CommandView } from './command-view.ts';

export interface WorkerView {
  id: string;
  externalId: string;
  framework: string;
  connectionId: string;
  hostname: string;
  pid: number | null;
  state: string;
  lastHeartbeat: string | null;
  concurrency: number | null;
  activeJobs: number;
  queues: string[];
  metadata: Record<string, unknown>;
  taskRate: number | null;
  processedTotal: number | null;
  extensions: Record<string, unknown>;
  /** whether each control can work for the worker now, and why not (control-availability.ts) */
  controls: Record<WorkerCommandType, ActionAvailability>;
  /** the worker's latest commands, newest first, and what became of them */
  commands: CommandView[];
  createdAt: string;
}

/**
 * `lastHeartbeat` is the last time the worker was heard from (a heartbeat or any other
 * event), the same instant the 6 s offline rule measures from. `activeJobs` is the
 * worker's own report when it sent one, else the jobs we see active on it.
 */
export function toWorkerView(worker: Worker, actor: ConnectionActor, nowMs: number): WorkerView {
  const liveness = livenessMs(worker);
  const state = effectiveWorkerState(worker, nowMs);
  const trail = actor.controlOutcomes.trailOf(workerTargetKey(worker.externalId));
  return {
    id: worker.id,
    externalId: worker.externalId,
    framework: worker.framework,
    connectionId: worker.connectionId,
    hostname: worker.hostname,
    pid: worker.pid,
    state,
    lastHeartbeat: Number.isFinite(liveness) ? isoOrNull(liveness) : null,
    concurrency: worker.concurrency,
    activeJobs: worker.reportedActiveJobs ?? actor.jobs.activePerWorker.get(worker.externalId),
    queues: worker.queues,
    metadata: worker.metadata,
    taskRate: worker.rate.taskRatePerMinute(nowMs),
    processedTotal: worker.processedTotal,
    extensions: {},
    controls: workerControls({ framework: worker.framework, state }, trail, actor.supportOf),
    commands: trail.map((outcome) => toControlView(actor.connectionId, outcome)).reverse(),
    createdAt: new Date(worker.createdAtMs).toISOString(),
  };
}
