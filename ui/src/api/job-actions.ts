/** Revoke and retry, one job or a selection, as the service's job action endpoints. */
import { api } from './client.ts';
import type { BulkResults, PublicActionResult } from './types.ts';

export type JobAction = 'revoke' | 'retry';

export const ACTION_LABEL: Record<JobAction, string> = { revoke: 'Revoke', retry: 'Retry' };
/** What an action does, said before the user confirms (where it cannot work it is not offered). */
export const ACTION_RULE: Record<JobAction, string> = {
  revoke: 'The agent is asked to stop it in the job system; until it reports, the job shows "revoke requested".',
  retry: 'The agent is asked to run it again in the job system; until it reports, the job shows "retry requested".',
};

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
