/**
 * The jobs of one connection: lookup maps, one sorted index per sort key, and tallies
 * per filterable field. Every change goes through `change()`, which re-indexes exactly
 * the keys that moved, so the indexes never drift from the maps.
 */
import { assert } from '../domain-error.ts';
import type { JobEvent } from '../ingest/normalized-event.ts';
import { jobBytes } from '../ingest/event-bytes.ts';
import type { JobState } from '../ingest/states.ts';
import { FINISHED_STATES } from '../ingest/states.ts';
import { ascendingOrder, sortById } from '../jobs/ascending-order.ts';
import { GroupedIndex } from '../jobs/grouped-index.ts';
import { PartitionedIndex } from '../jobs/partitioned-index.ts';
import { SortedIndex, type IndexEntry, type IndexPosition, type SortOrder, type SortValue } from '../jobs/sorted-index.ts';
import { mergeJobEvent, newJob, type Job } from './job-record.ts';
import { JOB_SORT_KEYS, JOB_SORT_VALUE, sortValuesOf, type JobSortKey } from './job-sort-keys.ts';
import { JobGroups, type GroupFields } from './job-groups.ts';
import { JobsById } from './jobs-by-id.ts';
import { JobsByKey } from './jobs-by-key.ts';
import { Tally } from './tally.ts';

export interface JobChange {
  job: Job;
  created: boolean;
  /** state before the change; null for a new job */
  stateBefore: JobState | null;
  /** true when the event was the newest for the job (it may have changed the state) */
  isNewest: boolean;
}

const idOf = (job: Job): string => job.id;
const externalIdOf = (job: Job): string => job.externalId;

/** What readers of the store's indexes get: a size and scans in a listing order, optionally filtered. */
export interface JobScans {
  readonly size: number;
  scan(order: SortOrder, after?: IndexPosition, matches?: (fields: GroupFields) => boolean): IterableIterator<IndexEntry<Job>>;
}

/** The sort keys kept in one index each; createdAt is kept per state (see createdByState). */
type SingleIndexKey = Exclude<JobSortKey, 'createdAt'>;

/** What the job store needs of an index; SortedIndex and PartitionedIndex both provide it. */
export interface JobIndex<T> {
  readonly size: number;
  insert(key: SortValue, item: T): void;
  remove(key: SortValue, item: T): boolean;
  scan(order: SortOrder, after?: IndexPosition, matches?: (item: T) => boolean): IterableIterator<IndexEntry<T>>;
  loadAscending(keys: readonly SortValue[], items: readonly T[]): void;
}

export class JobStore {
  private readonly byId = new JobsById();
  private byExternalId = new JobsByKey<Job>(externalIdOf);
  /** few-valued keys are partitioned by key (see partitioned-index.ts); times and durations are not */
  private readonly built: Record<SingleIndexKey, JobIndex<Job>> = {
    name: new PartitionedIndex<Job>(idOf),
    state: new PartitionedIndex<Job>(idOf),
    durationMs: new SortedIndex<Job>(idOf),
    queue: new PartitionedIndex<Job>(idOf),
    startedAt: new SortedIndex<Job>(idOf),
    worker: new PartitionedIndex<Job>(idOf),
  };
  /**
   * The sorted indexes, each built on first use after a recovery (see loadAll): reading one
   * builds that one; any change builds all that are still missing first.
   */
  readonly indexes: Readonly<Record<JobSortKey, JobScans>>;
  /**
   * The createdAt order, one partition per state (grouped-index.ts): a list by createdAt
   * reads the states merged, skipping those where the groups say its filter finds nothing,
   * and the eviction at the job cap reads the finished states' oldest directly.
   */
  private readonly createdByState = new GroupedIndex<Job, JobState>(idOf);
  /** After loadAll: the loaded jobs in id order, and which indexes are still to be built from them. Null once all are. */
  private unbuilt: { jobsById: Job[]; keys: Set<JobSortKey>; nameIndexes: boolean } | null = null;
  /** per task name, by createdAt: recentExecutions without scanning */
  private readonly byNameCreated = new Map<string, SortedIndex<Job>>();
  private readonly groups: JobGroups;
  /** queued jobs per queue: the fallback queue depth */
  readonly queuedPerQueue = new Tally<string>();
  /** active jobs per worker: the fallback activeJobs */
  readonly activePerWorker = new Tally<string>();
  /** set while a snapshot is being written: sees each job before it changes */
  beforeMutate: ((job: Job) => void) | null = null;
  private retainedBytesTotal = 0;
  /** inside deferIndexing: each touched job and its indexed values before (null: created inside) */
  private deferred: Map<Job, IndexedValues | null> | null = null;

  constructor(groupsMax?: number) {
    this.groups = new JobGroups(groupsMax);
    const indexes = {} as Record<JobSortKey, JobScans>;
    const { createdByState, groups } = this;
    const byCreated: JobScans = {
      get size() {
        return createdByState.size;
      },
      scan(order, after, matches) {
        const states = matches !== undefined && groups.usable ? groups.statesWhere(matches) : createdByState.groups;
        return createdByState.scanGroups(states, order, after, matches);
      },
    };
    for (const key of JOB_SORT_KEYS) {
      Object.defineProperty(indexes, key, {
        enumerable: true,
        get: () => {
          if (this.unbuilt !== null) this.buildIndex(key);
          return key === 'createdAt' ? byCreated : this.built[key];
        },
      });
    }
    this.indexes = Object.freeze(indexes);
  }

  get size(): number {
    return this.byId.size;
  }

  /** Estimated bytes of all jobs (see event-bytes.ts), kept in step with every change: the memory budget. */
  get retainedBytes(): number {
    return this.retainedBytesTotal;
  }

  get(id: string): Job | undefined {
    return this.byId.get(id);
  }

  getByExternalId(externalId: string): Job | undefined {
    return this.byExternalId.get(externalId);
  }

  applyEvent(connectionId: string, event: JobEvent): JobChange {
    this.buildAllIndexes();
    const existing = this.getByExternalId(event.externalId);
    if (existing === undefined) {
      assert(event.newJobId !== undefined, 'a job event that creates a job carries its id');
      const job = newJob(event.newJobId, connectionId, event);
      mergeJobEvent(job, event);
      this.insert(job);
      return { job, created: true, stateBefore: null, isNewest: true };
    }
    const stateBefore = existing.state;
    let isNewest = false;
    this.change(existing, (job) => {
      isNewest = mergeJobEvent(job, event);
    });
    return { job: existing, created: false, stateBefore, isNewest };
  }

  /**
   * Runs `apply` with the index work of its changes deferred: each job it creates or
   * changes is indexed, tallied and counted once, when `apply` returns, with the values it
   * ended with. An ingest batch often carries several events of one job (sent, started,
   * succeeded); re-indexing after each was most of the cost of applying them. Lookups by
   * id and externalId see every job at once; nothing reads the indexes, tallies or
   * retained bytes until `apply` returns.
   */
  deferIndexing(apply: () => void): void {
    assert(this.deferred === null, 'deferIndexing does not nest');
    this.buildAllIndexes();
    const deferred = new Map<Job, IndexedValues | null>();
    this.deferred = deferred;
    try {
      apply();
    } finally {
      this.deferred = null;
      for (const [job, before] of deferred) {
        if (before === null) this.index(job);
        else this.reindex(job, before);
      }
    }
  }

  /** Mutates a job through `mutate` and keeps indexes and tallies in step. */
  change(job: Job, mutate: (job: Job) => void): void {
    this.buildAllIndexes(); // from the values before the change: reindex moves entries from them
    const deferred = this.deferred;
    if (deferred !== null && deferred.has(job)) {
      mutate(job); // already captured (or created) in this deferral
      return;
    }
    this.beforeMutate?.(job);
    const before = indexedValuesOf(job);
    mutate(job);
    if (deferred !== null) deferred.set(job, before);
    else this.reindex(job, before);
  }

  /** Moves a job's index entries, tallies and byte estimate from `before` to what it holds now. */
  private reindex(job: Job, before: IndexedValues): void {
    this.retainedBytesTotal += jobBytes(job) - before.bytes;
    if (!sameCountedFields(before.counted, job)) {
      this.count(before.counted, -1);
      this.count(job, +1);
    }
    const after = sortValuesOf(job);
    JOB_SORT_KEYS.forEach((key, position) => {
      const old = before.sortValues[position] as SortValue;
      const now = after[position] as SortValue;
      if (old === now || key === 'createdAt') return;
      this.built[key].remove(old, job);
      this.built[key].insert(now, job);
    });
    if (before.sortValues[0] !== after[0] || before.counted.state !== job.state) {
      this.createdByState.remove(before.counted.state, before.sortValues[0] as number, job);
      this.createdByState.insert(job.state, job.createdAtMs, job);
    }
    // positions 0 and 1 of JOB_SORT_KEYS are createdAt and name: the per-name index's keys
    if (before.sortValues[0] !== after[0] || before.sortValues[1] !== after[1]) this.reindexNameCreated(job, before.sortValues);
  }

  remove(job: Job): void {
    this.buildAllIndexes();
    this.settleDeferred(job);
    this.beforeMutate?.(job);
    const values = sortValuesOf(job);
    JOB_SORT_KEYS.forEach((key, position) => {
      const removed = key === 'createdAt' ? this.createdByState.remove(job.state, job.createdAtMs, job) : this.built[key].remove(values[position] as SortValue, job);
      assert(removed, `job ${job.id} was in the ${key} index`);
    });
    this.nameIndex(job.name).remove(job.createdAtMs, job);
    if (this.nameIndex(job.name).size === 0) this.byNameCreated.delete(job.name);
    this.count(job, -1);
    this.retainedBytesTotal -= jobBytes(job);
    this.byId.remove(job);
    this.byExternalId.delete(job.externalId);
  }

  /** Other jobs of the same task name, newest createdAt first. */
  recentOfName(job: Job, limit: number): Job[] {
    const recent: Job[] = [];
    if (this.unbuilt?.nameIndexes === true) this.buildNameIndexes();
    const index = this.byNameCreated.get(job.name);
    if (index === undefined) return recent;
    for (const entry of index.scan('desc')) {
      if (entry.item !== job) recent.push(entry.item);
      if (recent.length >= limit) break;
    }
    return recent;
  }

  /** The jobs in `active`, read from the state index's own partition (alerts look for stuck jobs). */
  *activeJobs(): Generator<Job> {
    for (const entry of this.indexes.state.scan('asc', { key: 'active', id: '' })) {
      if (entry.key !== 'active') return;
      yield entry.item;
    }
  }

  /**
   * When a job named `name` last completed, looking at its newest `scanMax` jobs by
   * createdAt (a periodic task's newest run is almost always among them); null when none did.
   */
  lastCompletedAtOfName(name: string, scanMax: number): number | null {
    if (this.unbuilt?.nameIndexes === true) this.buildNameIndexes();
    const index = this.byNameCreated.get(name);
    if (index === undefined) return null;
    let scanned = 0;
    for (const entry of index.scan('desc')) {
      const job = entry.item;
      if (job.state === 'completed') return job.completedAtMs ?? job.lastEventMs;
      if (++scanned >= scanMax) break;
    }
    return null;
  }

  /**
   * The jobs in `states`, oldest createdAt first (ties by id): the eviction's candidates,
   * read without passing the jobs of other states. The store must not change while iterating.
   */
  oldestOf(states: Iterable<JobState>): IterableIterator<IndexEntry<Job>> {
    if (this.unbuilt !== null) this.buildIndex('createdAt');
    return this.createdByState.scanGroups(states, 'asc');
  }

  /** Every job, in id order (snapshots, counting); the store must not change while iterating. */
  values(): IterableIterator<Job> {
    return this.byId.values();
  }

  /** Every job, in id order, as a copied array: what a snapshot captures in the same tick as it fixes its log position. */
  toArray(): Job[] {
    return this.byId.toArray();
  }

  insert(job: Job): void {
    this.buildAllIndexes(); // before the job is in byId: a build from byId's jobs would index it twice
    this.byId.insert(job);
    this.byExternalId.add(job);
    if (this.deferred !== null) this.deferred.set(job, null);
    else this.index(job);
  }

  /** A job removed while its index work is deferred is indexed first, so removal finds its entries. */
  private settleDeferred(job: Job): void {
    const deferred = this.deferred;
    if (deferred === null || !deferred.has(job)) return;
    const before = deferred.get(job)!;
    deferred.delete(job);
    if (before === null) this.index(job);
    else this.reindex(job, before);
  }

  /** Index entries, tallies and byte estimate of a job that has none yet. */
  private index(job: Job): void {
    const values = sortValuesOf(job);
    JOB_SORT_KEYS.forEach((key, position) => {
      if (key === 'createdAt') this.createdByState.insert(job.state, job.createdAtMs, job);
      else this.built[key].insert(values[position] as SortValue, job);
    });
    this.nameIndex(job.name).insert(job.createdAtMs, job);
    this.count(job, +1);
    this.retainedBytesTotal += jobBytes(job);
  }

  /** Recovery: fills an empty store with many jobs, building each index in one ordered pass. */
  loadAll(jobs: Job[]): void {
    assert(this.size === 0, 'loadAll fills an empty job store');
    sortById(jobs, idOf);
    this.byId.loadSorted(jobs);
    this.byExternalId = new JobsByKey(externalIdOf, jobs);
    for (const job of jobs) {
      this.countInTallies(job, +1);
      this.retainedBytesTotal += jobBytes(job);
    }
    this.groups.addAll(jobs);
    // The sorted indexes were a third of a restart: serving starts without them, and each is
    // built when first read, when anything changes, or by buildNextIndex (the server calls it
    // while idle after start-up). Until then nothing changes the jobs, so `jobs` stays their
    // id order and their values are what the indexes would have been built from.
    if (jobs.length > 0) this.unbuilt = { jobsById: jobs, keys: new Set(JOB_SORT_KEYS), nameIndexes: true };
  }

  /** Whether indexes are still to be built after a recovery. */
  get indexesPending(): boolean {
    return this.unbuilt !== null;
  }

  /** Builds one index still missing after a recovery; false when none is. */
  buildNextIndex(): boolean {
    const unbuilt = this.unbuilt;
    if (unbuilt === null) return false;
    const [next] = unbuilt.keys;
    if (next !== undefined) this.buildIndex(next);
    else this.buildNameIndexes();
    return this.unbuilt !== null;
  }

  private buildAllIndexes(): void {
    while (this.unbuilt !== null) this.buildNextIndex();
  }

  private buildIndex(key: JobSortKey): void {
    const unbuilt = this.unbuilt!;
    if (!unbuilt.keys.delete(key)) return;
    const ordered = ascendingOrder(unbuilt.jobsById, JOB_SORT_VALUE[key]);
    if (key === 'createdAt') this.createdByState.loadAscending(ordered.keys, ordered.items, (job) => job.state);
    else this.built[key].loadAscending(ordered.keys, ordered.items);
    if (key === 'createdAt' && unbuilt.nameIndexes) {
      unbuilt.nameIndexes = false;
      this.loadNameIndexes(ordered.items);
    }
    this.settleUnbuilt();
  }

  private buildNameIndexes(): void {
    if (this.unbuilt?.nameIndexes !== true) return;
    this.buildIndex('createdAt'); // the per-name indexes come from the createdAt order
    if (this.unbuilt?.nameIndexes === true) {
      // createdAt was built already: take its order
      this.unbuilt.nameIndexes = false;
      this.loadNameIndexes(Array.from(this.createdByState.scan('asc'), (entry) => entry.item));
      this.settleUnbuilt();
    }
  }

  private settleUnbuilt(): void {
    if (this.unbuilt !== null && this.unbuilt.keys.size === 0 && !this.unbuilt.nameIndexes) this.unbuilt = null;
  }

  /** Per-name indexes from jobs already in (createdAt, id) order: grouping keeps that order. */
  private loadNameIndexes(byCreatedAt: readonly Job[]): void {
    const byName = new Map<string, Job[]>();
    for (const job of byCreatedAt) {
      const group = byName.get(job.name);
      if (group === undefined) byName.set(job.name, [job]);
      else group.push(job);
    }
    for (const [name, group] of byName) {
      const index = new SortedIndex<Job>(idOf);
      index.loadAscending(
        group.map((job) => job.createdAtMs),
        group,
      );
      this.byNameCreated.set(name, index);
    }
  }

  private reindexNameCreated(job: Job, before: SortValue[]): void {
    const oldName = before[1] as string;
    const oldCreated = before[0] as number;
    const oldIndex = this.byNameCreated.get(oldName);
    if (oldIndex !== undefined) {
      oldIndex.remove(oldCreated, job);
      if (oldIndex.size === 0) this.byNameCreated.delete(oldName);
    }
    this.nameIndex(job.name).insert(job.createdAtMs, job);
  }

  private nameIndex(name: string): SortedIndex<Job> {
    let index = this.byNameCreated.get(name);
    if (index === undefined) {
      index = new SortedIndex<Job>(idOf);
      this.byNameCreated.set(name, index);
    }
    return index;
  }

  /** Jobs matching a filter on the grouped fields, without scanning when the groups allow. */
  countWhere(matches: (fields: GroupFields) => boolean): number {
    if (this.groups.usable) return this.groups.countWhere(matches);
    let count = 0;
    for (const job of this.byId.values()) if (matches(job)) count++;
    return count;
  }

  private count(job: CountedFields, delta: number): void {
    this.groups.add(job, delta);
    this.countInTallies(job, delta);
  }

  private countInTallies(job: CountedFields, delta: number): void {
    if (job.state === 'queued') this.queuedPerQueue.add(job.queue, delta);
    if (job.state === 'active') this.activePerWorker.add(job.workerId, delta);
  }
}

/** The fields the tallies count by; a change that keeps them all skips the tallies. */
type CountedFields = GroupFields;

/** What a job is indexed, tallied and counted by, captured before a change. */
interface IndexedValues {
  sortValues: SortValue[];
  counted: CountedFields;
  bytes: number;
}

function indexedValuesOf(job: Job): IndexedValues {
  return { sortValues: sortValuesOf(job), counted: countedFieldsOf(job), bytes: jobBytes(job) };
}

function countedFieldsOf(job: Job): CountedFields {
  return { name: job.name, state: job.state, queue: job.queue, workerId: job.workerId, framework: job.framework };
}

function sameCountedFields(counted: CountedFields, job: Job): boolean {
  return (
    counted.name === job.name &&
    counted.state === job.state &&
    counted.queue === job.queue &&
    counted.workerId === job.workerId &&
    counted.framework === job.framework
  );
}

export function isFinished(state: JobState): boolean {
  return FINISHED_STATES.has(state);
}
