/**
 * The state rules of the commands on one job. Revoke and retry are the contract's (revoke
 * from `active` or `queued` to `cancelled`; retry from `failed` or `cancelled` to
 * `retrying`), and retry also runs a job waiting to retry now, leaving its state as it is.
 * The other job controls (run a scheduled job now, delete, kill a job waiting to retry)
 * change no state themselves: the job shows what its job system reports once it did it.
 * Each job is judged on its own; failures are results, not errors.
 */
import { JOB_STATES, type JobState } from '../ingest/states.ts';
import { COMMAND_VERBS, type JobCommandType } from './command-types.ts';
import type { SettledStatus } from './command-outcomes.ts';

export interface ActionRule {
  from: ReadonlySet<JobState>;
  /** the state the contract's answer gives; null: the command leaves the state to the job system */
  to: JobState | null;
  /** for the refusal: "job cannot be <verb> from state ..." */
  verb: string;
  /** why not, said where the states it works from are too many to list */
  elsewhere?: string;
}

export const ACTION_RULES: Record<JobCommandType, ActionRule> = {
  revoke: { from: new Set(['active', 'queued']), to: 'cancelled', verb: 'revoked' },
  retry: { from: new Set(['failed', 'cancelled', 'retrying']), to: 'retrying', verb: 'retried' },
  promote: { from: new Set(['scheduled']), to: null, verb: 'run now' },
  // a running job is its worker's until it ends
  delete: { from: new Set(JOB_STATES.filter((state) => state !== 'active')), to: null, verb: 'deleted', elsewhere: 'a running job cannot be deleted: its worker has it until it ends' },
  kill: { from: new Set(['retrying']), to: null, verb: 'killed' },
};

/**
 * The state entry a command makes on a job in `state`: its rule's state, or none when the
 * rule has none or the job is in it already (a retry of a job waiting to retry asks its
 * job system to run it now; the job stays `retrying` until it does).
 */
export function entryStateOf(type: JobCommandType, state: JobState): JobState | null {
  const to = ACTION_RULES[type].to;
  return to === null || to === state ? null : to;
}

export type ActionResult = { id: string; success: true; state: JobState; commandId: string } | { id: string; success: false; error: string; reason: 'not-found' | 'invalid-state' };

export function refusal(action: JobCommandType, state: JobState, id: string): ActionResult {
  return { id, success: false, reason: 'invalid-state', error: `job cannot be ${ACTION_RULES[action].verb} from state '${state}'` };
}

export function notFound(id: string): ActionResult {
  return { id, success: false, reason: 'not-found', error: 'job not found' };
}

/** The note a command's request leaves in the job's served history, and the dashboard's word while it waits. */
export function requestNote(action: JobCommandType): string {
  return `${COMMAND_VERBS[action]} requested`;
}

/** The note of a command that did not happen: the agent refused it or its job system cannot do it, or no outcome came within the wait. */
export function unfulfilledNote(action: JobCommandType, status: Exclude<SettledStatus, 'done'>, reason: string | null): string {
  const verb = COMMAND_VERBS[action];
  if (status === 'expired') return `${verb} expired unconfirmed`;
  return `${verb} ${status === 'failed' ? 'refused' : 'unsupported'}: ${reason ?? 'no reason given'}`;
}

/** The note of a command its job system carried out that changed no state of its own ("run now done"). */
export function doneNote(action: JobCommandType): string {
  return `${COMMAND_VERBS[action]} done`;
}
