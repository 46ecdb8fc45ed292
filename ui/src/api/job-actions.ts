/** Revoke and retry, one job or a selection, as the service's job action endpoints. */
import { api } from './client.ts';
import type { BulkResults, PublicActionResult } from './types.ts';

export type JobAction = 'revoke' | 'retry';

export const ACTION_LABEL: Record<JobAction, string> = { revoke: 'Revoke', retry: 'Retry' };
/** The rules of the service, said before the user confirms. */
export const ACTION_RULE: Record<JobAction, string> = {
  revoke: 'Only queued and active jobs can be revoked; they become cancelled, and the agent is asked to stop them.',
  retry: 'Only failed and cancelled jobs can be retried; they become retrying, and the agent is asked to run them again.',
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
