/**
 * Job list filters as one predicate, and `total` from the per-group counts of the job
 * store (see job-groups.ts) rather than a scan.
 */
import type { ConnectionActor } from '../connection/connection-actor.ts';
import type { GroupFields } from '../connection/job-groups.ts';
import type { Framework, JobState } from '../ingest/states.ts';

export interface JobFilters {
  search?: string;
  state?: JobState;
  queue?: string;
  worker?: string;
  framework?: Framework;
}

/** A predicate over the grouped fields, so one filter serves both pages (jobs) and totals (groups). */
export function jobMatcher(filters: JobFilters): ((job: GroupFields) => boolean) | null {
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

export function countMatching(actor: ConnectionActor, matches: ((job: GroupFields) => boolean) | null): number {
  return matches === null ? actor.jobs.size : actor.jobs.countWhere(matches);
}
