/**
 * Where revoke and retry can work: the contract's state rule (job-actions.ts) and what each
 * job system's agent can carry out. The service keeps the contract's answers (a revoke of
 * a running Sidekiq job is accepted and answered `cancelled`, and the agent then reports it
 * refused); this says beforehand what will happen, so the dashboard offers an action only
 * where it can work and says why not elsewhere. The job detail serves it as `actions`, and
 * the dashboard's bulk bar reads it for list items: one table for both.
 */
import type { Framework, JobState } from '../ingest/states.ts';
import type { CommandStatus } from './command-outcomes.ts';
import type { JobAction } from './connection-records.ts';
import { ACTION_RULES } from './job-actions.ts';

/** What a job system's agent cannot do, by action and the state jobwatch shows, with the reason (each agent's README says the same). */
export const JOB_SYSTEM_LIMITS: Record<Framework, Partial<Record<JobAction, Partial<Record<JobState, string>>>>> = {
  // revoke terminates a running task (SIGTERM by default); retry re-sends a failed or revoked task
  celery: {},
  bullmq: {
    revoke: { active: 'a running BullMQ job cannot be cancelled from outside its worker' },
    retry: { cancelled: 'a revoked BullMQ job was removed from BullMQ: there is nothing to run again' },
  },
  sidekiq: {
    revoke: { active: 'open-source Sidekiq cannot stop a running job safely' },
    retry: { cancelled: "a revoked Sidekiq job was deleted from Sidekiq's queue or sets: there is nothing to run again" },
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
  lastCommand: { type: JobAction; status: CommandStatus } | null;
}

export function actionAvailability(action: JobAction, job: ActionTarget): ActionAvailability {
  const rule = ACTION_RULES[action];
  const pending = job.lastCommand?.status === 'pending' ? job.lastCommand : null;
  if (pending !== null) return notAvailable(`a ${pending.type} is waiting for the agent`);
  if (!rule.from.has(job.state as JobState)) return notAvailable(`only ${[...rule.from].join(' or ')} jobs can be ${rule.verb}`);
  const limit = JOB_SYSTEM_LIMITS[job.framework as Framework]?.[action]?.[job.state as JobState];
  return limit === undefined ? { available: true, reason: null } : notAvailable(limit);
}

function notAvailable(reason: string): ActionAvailability {
  return { available: false, reason };
}
