/**
 * Job list filters as one predicate, and `total` computed the cheapest way: from the
 * tallies when one field filter is set, else by counting matches.
 */
import type { ConnectionActor } from '../connection/connection-actor.ts';
import type { Job } from '../connection/job-record.ts';
import type { Framework, JobState } from '../ingest/states.ts';

export interface JobFilters {
  search?: string;
  state?: JobState;
  queue?: string;
  worker?: string;
  framework?: Framework;
}

export function jobMatcher(filters: JobFilters): ((job: Job) => boolean) | null {
  const { state, queue, worker, framework } = filters;
  const needle = filters.search?.toLowerCase();
  if (needle === undefined && state === undefined && queue === undefined && worker === undefined && framework === undefined) return null;
  // Task names repeat across many jobs: lower-case and test each distinct name once per query.
  const nameMatches = new Map<string, boolean>();
  const matchesName = (name: string): boolean => {
    let result = nameMatches.get(name);
    if (result === undefined) {
      result = name.toLowerCase().includes(needle!);
      nameMatches.set(name, result);
    }
    return result;
  };
  return (job) =>
    (state === undefined || job.state === state) &&
    (queue === undefined || job.queue === queue) &&
    (worker === undefined || job.workerId === worker) &&
    (framework === undefined || job.framework === framework) &&
    (needle === undefined || matchesName(job.name));
}

export function countMatching(actor: ConnectionActor, filters: JobFilters, matches: ((job: Job) => boolean) | null): number {
  if (matches === null) return actor.jobs.size;
  const set = Object.entries(filters).filter(([, value]) => value !== undefined);
  if (set.length === 1) {
    const [field, value] = set[0]!;
    if (field === 'state') return actor.jobs.perState.get(value as JobState);
    if (field === 'queue') return actor.jobs.perQueue.get(value as string);
    if (field === 'worker') return actor.jobs.perWorker.get(value as string);
    if (field === 'framework') return actor.jobs.perFramework.get(value as Framework);
  }
  let count = 0;
  for (const job of actor.jobs.values()) if (matches(job)) count++;
  return count;
}
