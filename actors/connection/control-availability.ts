/**
 * Where each control of a queue or a worker can work now: what the connection's agent
 * reported it supports, no command of the same kind still pending for it, and the target's
 * state (a paused queue is resumed, not paused again; an offline worker hears nothing).
 * The queue and worker views serve it as `controls`, and the dashboard shows a control that
 * cannot work disabled with the reason.
 */
import type { Framework } from '../ingest/states.ts';
import { actionAvailability, agentSupport, notAvailable, type ActionAvailability, type SupportOf } from './action-availability.ts';
import { COMMAND_VERBS, QUEUE_COMMAND_TYPES, WORKER_COMMAND_TYPES, type ControlCommandType, type QueueCommandType, type WorkerCommandType } from './command-types.ts';
import type { ControlOutcome } from './control-outcomes.ts';

/**
 * Job systems whose agent cannot retry a queue's failed jobs at once but can retry one:
 * the service sends one `retry` per failed job of the queue it knows (Celery keeps no list
 * of failed tasks to retry from; its results live in the backend).
 */
export const RETRY_FAILED_PER_JOB: ReadonlySet<Framework> = new Set(['celery']);

export function queueControls(queue: { framework: string; paused: boolean | null }, trail: readonly ControlOutcome[], supportOf: SupportOf): Record<QueueCommandType, ActionAvailability> {
  const controls = {} as Record<QueueCommandType, ActionAvailability>;
  for (const type of QUEUE_COMMAND_TYPES) {
    controls[type] = pendingOf(type, trail) ?? queueRule(type, queue) ?? queueSupport(type, queue.framework, supportOf) ?? { available: true, reason: null };
  }
  return controls;
}

export function workerControls(worker: { framework: string; state: string }, trail: readonly ControlOutcome[], supportOf: SupportOf): Record<WorkerCommandType, ActionAvailability> {
  const controls = {} as Record<WorkerCommandType, ActionAvailability>;
  for (const type of WORKER_COMMAND_TYPES) {
    const offline = worker.state === 'offline' ? notAvailable('the worker is offline: there is nothing to ask it') : null;
    // what the job system can never do says more than that the worker is away now
    controls[type] = pendingOf(type, trail) ?? agentSupport(supportOf(worker.framework, type), worker.framework, type) ?? offline ?? { available: true, reason: null };
  }
  return controls;
}

function pendingOf(type: ControlCommandType, trail: readonly ControlOutcome[]): ActionAvailability | null {
  const pending = trail.some((outcome) => outcome.status === 'pending' && outcome.command.type === type);
  return pending ? notAvailable(`a ${COMMAND_VERBS[type]} is waiting for the agent`) : null;
}

function queueRule(type: QueueCommandType, queue: { paused: boolean | null }): ActionAvailability | null {
  if (type === 'queue.pause' && queue.paused === true) return notAvailable('the queue is paused');
  if (type === 'queue.resume' && queue.paused === false) return notAvailable('the queue is not paused');
  return null;
}

function queueSupport(type: QueueCommandType, framework: string, supportOf: SupportOf): ActionAvailability | null {
  if (type === 'queue.retry_failed' && RETRY_FAILED_PER_JOB.has(framework as Framework)) {
    // the service asks for each failed job: what decides is whether the agent retries one
    const one = actionAvailability('retry', { state: 'failed', framework, lastCommand: null }, supportOf);
    return one.available ? null : one;
  }
  return agentSupport(supportOf(framework, type), framework, type);
}
