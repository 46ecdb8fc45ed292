/**
 * Where each command on a job can work: the state rule (job-actions.ts), no command of the
 * job still pending, what the connection's agent reported it supports (its capabilities),
 * and what each job system can do from the state jobwatch shows. The service keeps the
 * contract's answers (a revoke of a running Sidekiq job is accepted and answered
 * `cancelled`, and the agent then reports it refused); this says beforehand what will
 * happen, so the dashboard offers a command only where it can work and says why not
 * elsewhere. The job detail serves it as `actions`, and the dashboard's bulk bar and the
 * list's buttons read it for list items: one table for both.
 */
import type { Framework, JobState } from '../ingest/states.ts';
import type { ControlSupport } from './agent-capabilities.ts';
import type { CommandStatus } from './command-outcomes.ts';
import { COMMAND_VERBS, JOB_COMMAND_TYPES, type CommandType, type JobCommandType } from './command-types.ts';
import { ACTION_RULES } from './job-actions.ts';

/** What a job system cannot do, by command and the state jobwatch shows, with the reason (each agent's README says the same). */
export const JOB_SYSTEM_LIMITS: Record<Framework, Partial<Record<JobCommandType, Partial<Record<JobState, string>>>>> = {
  // revoke terminates a running task (SIGTERM by default); retry re-sends a failed or revoked task
  celery: {
    retry: { retrying: "a Celery task waiting to retry is held by its worker until its countdown ends: it cannot be run sooner from outside" },
    delete: {
      completed: 'a finished Celery task is only a result in the backend: there is nothing to delete',
      failed: 'a finished Celery task is only a result in the backend: there is nothing to delete',
      cancelled: 'a revoked Celery task is already gone from its queue',
    },
  },
  bullmq: {
    revoke: { active: 'a running BullMQ job cannot be cancelled from outside its worker' },
    retry: { cancelled: 'a revoked BullMQ job was removed from BullMQ: there is nothing to run again' },
    delete: { cancelled: 'a revoked BullMQ job was removed from BullMQ already' },
  },
  sidekiq: {
    revoke: { active: 'open-source Sidekiq cannot stop a running job safely' },
    retry: { cancelled: "a revoked Sidekiq job was deleted from Sidekiq's queue or sets: there is nothing to run again" },
    delete: {
      completed: 'Sidekiq keeps no finished jobs: there is nothing to delete',
      cancelled: "a revoked Sidekiq job was deleted from Sidekiq's queue or sets already",
    },
  },
};

export interface ActionAvailability {
  available: boolean;
  /** why not, when not available */
  reason: string | null;
}

/** What `actionAvailability` reads of a job: its list item or detail has it all. */
export interface ActionTarget {
  state: string;
  framework: string;
  lastCommand: { type: JobCommandType; status: CommandStatus } | null;
}

/** What the connection's agents said they support: a capability book's `support`, or one read from the dashboard's copy. */
export type SupportOf = (framework: string, type: CommandType) => ControlSupport | undefined;

/** With no report, an agent from before the controls: it carries out revoke and retry only. */
const noReports: SupportOf = () => undefined;

export function actionAvailability(action: JobCommandType, job: ActionTarget, supportOf: SupportOf = noReports): ActionAvailability {
  const rule = ACTION_RULES[action];
  const pending = job.lastCommand?.status === 'pending' ? job.lastCommand : null;
  if (pending !== null) return notAvailable(`a ${COMMAND_VERBS[pending.type]} is waiting for the agent`);
  if (!rule.from.has(job.state as JobState)) return notAvailable(rule.elsewhere ?? `only ${inWords([...rule.from])} jobs can be ${rule.verb}`);
  const support = agentSupport(supportOf(job.framework, action), job.framework, action);
  if (support !== null) return support;
  const limit = JOB_SYSTEM_LIMITS[job.framework as Framework]?.[action]?.[job.state as JobState];
  return limit === undefined ? { available: true, reason: null } : notAvailable(limit);
}

/** Every job command's availability, as the detail serves it. */
export function allActions(job: ActionTarget, supportOf: SupportOf): Record<JobCommandType, ActionAvailability> {
  return Object.fromEntries(JOB_COMMAND_TYPES.map((type) => [type, actionAvailability(type, job, supportOf)])) as Record<JobCommandType, ActionAvailability>;
}

/**
 * Null when the agent can do it; otherwise why not. Revoke and retry are carried out by
 * every agent, reported or not; the newer commands only by an agent that said so.
 */
export function agentSupport(support: ControlSupport | undefined, framework: string, type: CommandType): ActionAvailability | null {
  if (support === undefined) {
    if (type === 'revoke' || type === 'retry') return null;
    return notAvailable(`the ${framework} agent of this connection has not said it can ${COMMAND_VERBS[type]} (an agent reports its controls when it starts; an older one does not)`);
  }
  return support.supported ? null : notAvailable(support.reason);
}

/** "failed", "active or queued", "failed, cancelled or retrying". */
function inWords(states: string[]): string {
  return states.length <= 2 ? states.join(' or ') : `${states.slice(0, -1).join(', ')} or ${states.at(-1)}`;
}

export function notAvailable(reason: string): ActionAvailability {
  return { available: false, reason };
}
