import type { WorkerView } from '../../api/types.ts';

/**
 * What tells a worker from its neighbours: the name its job system gives it (BullMQ's worker
 * name, which the agent sends as metadata.workerName), its host and its pid, where known.
 */
export function workerTitle(w: Pick<WorkerView, 'hostname' | 'pid' | 'metadata'>): string {
  const name = w.metadata.workerName;
  const named = typeof name === 'string' && name !== '' && name !== w.hostname ? `${name} on ` : '';
  return `${named}${w.hostname}${w.pid === null ? '' : ` · pid ${w.pid}`}`;
}
