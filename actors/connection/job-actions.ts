/**
 * The state rules of revoke and retry (interface and decisions): revoke from `active` or
 * `queued` to `cancelled`; retry from `failed` or `cancelled` to `retrying`. Each job is
 * judged on its own; failures are results, not errors.
 */
import type { JobState } from '../ingest/states.ts';
import type { JobAction } from './connection-records.ts';

export interface ActionRule {
  from: ReadonlySet<JobState>;
  to: JobState;
  verb: string;
}

export const ACTION_RULES: Record<JobAction, ActionRule> = {
  revoke: { from: new Set(['active', 'queued']), to: 'cancelled', verb: 'revoked' },
  retry: { from: new Set(['failed', 'cancelled']), to: 'retrying', verb: 'retried' },
};

export type ActionResult = { id: string; success: true; state: JobState } | { id: string; success: false; error: string; reason: 'not-found' | 'invalid-state' };

export function refusal(action: JobAction, state: JobState, id: string): ActionResult {
  return { id, success: false, reason: 'invalid-state', error: `job cannot be ${ACTION_RULES[action].verb} from state '${state}'` };
}

export function notFound(id: string): ActionResult {
  return { id, success: false, reason: 'not-found', error: 'job not found' };
}

/** The note a command's request leaves in the job's served history, and the dashboard's word while it waits. */
export function requestNote(action: JobAction): string {
  return `${action} requested`;
}

/** The note of a command that did not happen: the agent refused it, or no outcome came within the wait. */
export function unfulfilledNote(action: JobAction, status: 'failed' | 'expired', reason: string | null): string {
  return status === 'failed' ? `${action} refused: ${reason ?? 'no reason given'}` : `${action} expired unconfirmed`;
}
