/**
 * Job counts per distinct (name, state, queue, worker, framework). A list's `total`
 * for any combination of filters, `search` included, is then a sum over the groups
 * (a few thousand in practice) instead of a scan of every job. If a connection ever
 * holds more distinct groups than the bound, counting falls back to scanning jobs.
 */
import type { Job } from './job-record.ts';

export type GroupFields = Pick<Job, 'name' | 'state' | 'queue' | 'workerId' | 'framework'>;

interface JobGroup extends GroupFields {
  count: number;
}

export const JOB_GROUPS_MAX = 100_000;

/** One level per field of GroupFields, in order; counts at the last. */
type GatheredGroups = Map<string | null, GatheredGroups | number>;

function childOf(parent: GatheredGroups, key: string | null): GatheredGroups {
  let child = parent.get(key) as GatheredGroups | undefined;
  if (child === undefined) parent.set(key, (child = new Map()));
  return child;
}

export class JobGroups {
  private readonly groups = new Map<string, JobGroup>();
  private overflowed = false;

  constructor(private readonly groupsMax = JOB_GROUPS_MAX) {}

  /** False once the bound was passed: callers must count by scanning. */
  get usable(): boolean {
    return !this.overflowed;
  }

  add(fields: GroupFields, delta: number): void {
    if (this.overflowed) return;
    const key = `${fields.name}\u0000${fields.state}\u0000${fields.queue ?? '\u0001'}\u0000${fields.workerId ?? '\u0001'}\u0000${fields.framework}`;
    const group = this.groups.get(key);
    if (group !== undefined) {
      group.count += delta;
      if (group.count === 0) this.groups.delete(key);
      return;
    }
    if (this.groups.size >= this.groupsMax) {
      this.overflowed = true;
      this.groups.clear();
      return;
    }
    const { name, state, queue, workerId, framework } = fields;
    this.groups.set(key, { name, state, queue, workerId, framework, count: delta });
  }

  /**
   * Counts many jobs at once (recovery): equal groups are gathered in nested maps keyed
   * by the fields themselves (strings the connection already shares, hashed once), then
   * added once per group with its count, instead of building a key string per job.
   */
  addAll(jobs: Iterable<GroupFields>): void {
    const gathered: GatheredGroups = new Map();
    for (const job of jobs) {
      const byState = childOf(gathered, job.name);
      const byQueue = childOf(byState, job.state);
      const byWorker = childOf(byQueue, job.queue);
      const byFramework = childOf(byWorker, job.workerId) as Map<string | null, number>;
      byFramework.set(job.framework, (byFramework.get(job.framework) ?? 0) + 1);
    }
    for (const [name, byState] of gathered as Map<string, GatheredGroups>)
      for (const [state, byQueue] of byState as Map<GroupFields['state'], GatheredGroups>)
        for (const [queue, byWorker] of byQueue as Map<string | null, GatheredGroups>)
          for (const [workerId, byFramework] of byWorker as Map<string | null, Map<GroupFields['framework'], number>>)
            for (const [framework, count] of byFramework) this.add({ name, state, queue, workerId, framework }, count);
  }

  /** The states of the groups `matches` accepts: where a filtered listing can find jobs at all. */
  statesWhere(matches: (fields: GroupFields) => boolean): Set<GroupFields['state']> {
    const states = new Set<GroupFields['state']>();
    for (const group of this.groups.values()) if (!states.has(group.state) && matches(group)) states.add(group.state);
    return states;
  }

  countWhere(matches: (fields: GroupFields) => boolean): number {
    let count = 0;
    for (const group of this.groups.values()) if (matches(group)) count += group.count;
    return count;
  }
}
