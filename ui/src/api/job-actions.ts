/** The commands on jobs: revoke and retry, one job or a selection (the contract's answers), and run now, delete and kill of one job (202 with the command). */
import type { JobCommandType } from '../../../actors/connection/command-types.ts';
import { track } from '../lib/command-tracker.ts';
import { api } from './client.ts';
import type { BulkResults, CommandAccepted, JobDetail, PublicActionResult } from './types.ts';

export type JobAction = 'revoke' | 'retry';

export const ACTION_LABEL: Record<JobCommandType, string> = { revoke: 'Revoke', retry: 'Retry', promote: 'Run now', delete: 'Delete', kill: 'Kill' };
/** What a command does, said before the user confirms (where it cannot work it is not offered). */
export const ACTION_RULE: Record<JobCommandType, string> = {
  revoke: 'The agent is asked to stop it in the job system; until it reports, the job shows "revoke requested".',
  retry: 'The agent is asked to run it again in the job system (a job waiting to retry: at once); until it reports, the job shows "retry requested".',
  promote: 'The agent is asked to run it now instead of when it was scheduled; the job shows what the job system then does.',
  delete: 'The agent is asked to delete it from the job system (jobwatch keeps its history); it will not run again.',
  kill: 'The agent is asked to fail it for good instead of retrying it; the job shows failed once the job system did it.',
};

/**
 * Any command on one job, tracked until the agent reports: revoke and retry answer the
 * contract's state, so the command is read from the job's detail.
 */
export async function commandJob(type: JobCommandType, id: string, label: string): Promise<void> {
  if (type === 'revoke' || type === 'retry') {
    await actOnJob(type, id);
    const detail = await api<JobDetail>('GET', `/api/jobs/${encodeURIComponent(id)}`);
    const last = detail.lastCommand;
    if (last !== null) track(label, { commandId: last.id }, { ...last, connectionId: detail.connectionId, target: { kind: 'job', jobId: id }, params: null });
    return;
  }
  track(label, await api<CommandAccepted>('POST', `/api/jobs/${encodeURIComponent(id)}/${type}`));
}

export function actOnJob(action: JobAction, id: string): Promise<PublicActionResult> {
  return api<PublicActionResult>('POST', `/api/jobs/${encodeURIComponent(id)}/${action}`);
}

/** The service takes at most 100 ids a request; larger selections go in several. */
export async function actOnJobs(action: JobAction, ids: string[]): Promise<PublicActionResult[]> {
  const results: PublicActionResult[] = [];
  for (let start = 0; start < ids.length; start += 100) {
    const reply = await api<BulkResults>('POST', `/api/jobs/bulk/${action}`, { ids: ids.slice(start, start + 100) });
    results.push(...reply.results);
  }
  return results;
}
