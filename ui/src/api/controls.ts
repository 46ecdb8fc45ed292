/**
 * The controls of the job system as the service's endpoints: each answers 202 with the
 * command, which is tracked until the agent's outcome arrives (lib/command-tracker.ts).
 */
import { track } from '../lib/command-tracker.ts';
import { api, queryString } from './client.ts';
import type { CleanEstimate, CommandAccepted } from './types.ts';

export type CleanBody = { mode: 'finished'; olderThanMs: number; states: Array<'completed' | 'failed'> } | { mode: 'waiting' };

/** Asks for a control at `path` (`/api/queues/<id>/pause`) and tracks it under `label`; throws the service's refusal. */
export async function askControl(label: string, path: string, body: unknown = {}): Promise<CommandAccepted> {
  const accepted = await api<CommandAccepted>('POST', path, body);
  track(label, accepted);
  return accepted;
}

export function cleanEstimate(queueId: string, body: CleanBody): Promise<CleanEstimate> {
  const query = body.mode === 'waiting' ? queryString({ mode: 'waiting' }) : queryString({ mode: 'finished', olderThanMs: body.olderThanMs, states: body.states.join(',') });
  return api<CleanEstimate>('GET', `/api/queues/${encodeURIComponent(queueId)}/clean-estimate${query}`);
}
