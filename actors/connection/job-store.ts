/**
 * The jobs of one connection: their rows (job-table.ts), lookups by id and externalId, one
 * sorted index of rows per sort key, and tallies per filterable field. Every change goes
 * through `change()`, which re-indexes exactly the keys that moved, so the indexes never
 * drift from the rows. Readers get rows for the time of a synchronous step, copies
 * (`read`) to keep, and refs (`refOf`) to find a job again later.
 */
import { assert } from '../domain-error.ts';
import type { JobEvent } from '../ingest/normalized-event.ts';
import type { JobState } from '../ingest/states.ts';
import { FINISHED_STATES } from '../ingest/states.ts';
import { ascendingOrder, sortById } from '../jobs/ascending-order.ts';
import { GroupedIndex } from '../jobs/grouped-index.ts';
import { PartitionedIndex } from '../jobs/partitioned-index.ts';
import { SortedIndex, type IndexEntry, type IndexPosition, type SortOrder, type SortValue } from '../jobs/sorted-index.ts';
import type { Job } from './job-record.ts';
import { JobTable } from './job-table.ts';
import { JOB_SORT_KEYS, JOB_SORT_VALUE, sortValuesOf, type JobSortKey } from './job-sort-keys.ts';
import { JobGroups, type GroupFields } from './job-groups.ts';
import { JobsById } from './jobs-by-id.ts';
import { JobsByKey } from './jobs-by-key.ts';
import { RelationIndex } from './relation-index.ts';
import { Tally } from './tally.ts';
import type { PayloadLimits } from '../ingest/job-payload.ts';

export interface JobChange {
  row: number;
  created: boolean;
  /** state before the change; null for a new job */
  stateBefore: JobState | null;
  /** true when the event was the newest for the job (it may have changed the state) */
  isNewest: boolean;
}

/**
 * What readers of the store's indexes get: a size and scans of rows in a listing order,
 * optionally filtered by the grouped fields (`matches`, which the groups can answer without
 * a row) and then by the row itself (`rowMatches`, e.g. what the job was called with).
 */
export interface JobScans {
  readonly size: number;
  scan(order: SortOrder, after?: IndexPosition, matches?: (fields: GroupFields) => boolean, rowMatches?: (row: number) => boolean): IterableIterator<IndexEntry<number>>;
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
  readonly table: JobTable;
  private readonly byId: JobsById<number>;
  private byExternalId: JobsByKey<number>;
  /** few-valued keys are partitioned by key (see partitioned-index.ts); times and durations are not */
  private readonly built: Record<SingleIndexKey, JobIndex<number>>;
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
  private readonly createdByState: GroupedIndex<number, JobState>;
  /** After loadAll: the loaded rows in id order, and which indexes are still to be built from them. Null once all are. */
  private unbuilt: { rowsById: number[]; keys: Set<JobSortKey>; nameIndexes: boolean } | null = null;
  /** per task name, by createdAt: recentExecutions without scanning */
  private readonly byNameCreated = new Map<string, SortedIndex<number>>();
  /** a row's grouped fields for the filters, read through one reused object (filters read it at once and keep nothing) */
  private readonly fields: RowFields;
  private readonly groups: JobGroups;
  /** each parent's children and each root's members (relation-index.ts) */
  readonly relationIndex = new RelationIndex();
  /** queued jobs per queue: the fallback queue depth */
  readonly queuedPerQueue = new Tally<string>();
  /** active jobs per worker: the fallback activeJobs */
  readonly activePerWorker = new Tally<string>();
  /** set while a snapshot is being written: sees each row before it changes or is freed */
  beforeMutate: ((row: number) => void) | null = null;
  private retainedBytesTotal = 0;
  /** inside deferIndexing: each touched row and its indexed values before (null: created inside) */
  private deferred: Map<number, IndexedValues | null> | null = null;

  constructor(connectionId: string, groupsMax?: number, logLimits?: Pick<PayloadLimits, 'logBytesMax' | 'logLinesMax'>) {
    const table = (this.table = new JobTable(connectionId, logLimits));
    const ids = table.idOrder;
    this.byId = new JobsById(ids);
    this.byExternalId = new JobsByKey(table.externalIdKeys);
    this.built = {
      name: new PartitionedIndex(ids),
      state: new PartitionedIndex(ids),
      durationMs: new SortedIndex(ids),
      queue: new PartitionedIndex(ids),
      startedAt: new SortedIndex(ids),
      worker: new PartitionedIndex(ids),
    };
    this.createdByState = new GroupedIndex(ids);
    this.fields = new RowFields(table);
    this.groups = new JobGroups(groupsMax);
    const indexes = {} as Record<JobSortKey, JobScans>;
    const { createdByState, groups } = this;
    const byCreated: JobScans = {
      get size() {
        return createdByState.size;
      },
      scan: (order, after, matches, rowMatches) => {
        const states = matches !== undefined && groups.usable ? groups.statesWhere(matches) : createdByState.groups;
        return createdByState.scanGroups(states, order, after, this.rowMatcher(matches, rowMatches));
      },
    };
    for (const key of JOB_SORT_KEYS) {
      const built = key === 'createdAt' ? createdByState : this.built[key];
      const scans: JobScans =
        key === 'createdAt'
          ? byCreated
          : {
              get size() {
                return built.size;
              },
              scan: (order, after, matches, rowMatches) => built.scan(order, after, this.rowMatcher(matches, rowMatches)),
            };
      Object.defineProperty(indexes, key, {
        enumerable: true,
        get: () => {
          if (this.unbuilt !== null) this.buildIndex(key);
          return scans;
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

  /** The row of the job with this id, or -1. */
  rowOf(id: string): number {
    return this.byId.get(id) ?? -1;
  }

  /** The row of the job with this externalId, or -1. */
  rowOfExternalId(externalId: string): number {
    return this.byExternalId.get(externalId) ?? -1;
  }

  /** A copy of the job with this id. */
  get(id: string): Job | undefined {
    const row = this.rowOf(id);
    return row < 0 ? undefined : this.table.read(row);
  }

  /** A copy of the job with this externalId. */
  getByExternalId(externalId: string): Job | undefined {
    const row = this.rowOfExternalId(externalId);
    return row < 0 ? undefined : this.table.read(row);
  }

  /** A copy of a held row's job. */
  read(row: number): Job {
    return this.table.read(row);
  }

  /** A copy of a held row's job as a list shows it: without the texts only its detail shows (JobTable.readListed). */
  readListed(row: number): Job {
    return this.table.readListed(row);
  }

  /** A number naming the row's job that no later job in the row shares (the live stream's change sets). */
  refOf(row: number): number {
    return this.table.refOf(row);
  }

  /** A copy of the job a ref names as a list shows it, or undefined once it is gone. */
  readRefListed(ref: number): Job | undefined {
    const row = this.table.rowOfRef(ref);
    return row < 0 ? undefined : this.table.readListed(row);
  }

  applyEvent(event: JobEvent): JobChange {
    this.buildAllIndexes();
    const existing = this.rowOfExternalId(event.externalId);
    if (existing < 0) {
      assert(event.newJobId !== undefined, 'a job event that creates a job carries its id');
      const row = this.table.create(event.newJobId, event);
      this.table.merge(row, event);
      this.insert(row);
      this.fileRelations(row);
      return { row, created: true, stateBefore: null, isNewest: true };
    }
    const stateBefore = this.table.stateOf(existing);
    let isNewest = false;
    const relations = this.table.relations;
    const parentBefore = relations.parentCodeOf(existing);
    const rootBefore = relations.rootCodeOf(existing);
    this.change(existing, () => {
      isNewest = this.table.merge(existing, event);
    });
    if (parentBefore !== relations.parentCodeOf(existing) || rootBefore !== relations.rootCodeOf(existing)) {
      this.relationIndex.remove(existing, parentBefore, rootBefore);
      this.fileRelations(existing);
    }
    return { row: existing, created: false, stateBefore, isNewest };
  }

  /**
   * A revoke or retry: the job enters `state` at `atMs`. Its newest event stays the job
   * system's (events merge as if the action were not there), so a withdrawal leaves the job
   * as the job system reported it.
   */
  applyAction(row: number, state: JobState, atMs: number): void {
    this.change(row, () => this.table.addHistory(row, state, atMs));
  }

  /**
   * A revoke or retry that did not happen: its entry leaves the history, and the job shows
   * what the job system last reported (or a later action). False when the entry is gone.
   */
  withdrawAction(row: number, state: JobState, atMs: number): boolean {
    let withdrawn = false;
    this.change(row, () => {
      withdrawn = this.table.removeHistory(row, state, atMs);
    });
    return withdrawn;
  }

  /** A retry from jobwatch that the agent carried out: one run more, added by hand. */
  countManualRetry(row: number): void {
    this.change(row, () => this.table.addManualRetry(row));
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
    const deferred = new Map<number, IndexedValues | null>();
    this.deferred = deferred;
    try {
      apply();
    } finally {
      this.deferred = null;
      for (const [row, before] of deferred) {
        if (before === null) this.index(row);
        else this.reindex(row, before);
      }
    }
  }

  /** Changes a row through `mutate` and keeps indexes and tallies in step. */
  private change(row: number, mutate: () => void): void {
    this.buildAllIndexes(); // from the values before the change: reindex moves entries from them
    const deferred = this.deferred;
    if (deferred !== null && deferred.has(row)) {
      mutate(); // already captured (or created) in this deferral
      return;
    }
    this.beforeMutate?.(row);
    const before = this.indexedValuesOf(row);
    mutate();
    if (deferred !== null) deferred.set(row, before);
    else this.reindex(row, before);
  }

  /** Moves a row's index entries, tallies and byte estimate from `before` to what it holds now. */
  private reindex(row: number, before: IndexedValues): void {
    const table = this.table;
    this.retainedBytesTotal += table.bytesOf(row) - before.bytes;
    const counted = countedFieldsOf(table, row);
    if (!sameCountedFields(before.counted, counted)) {
      this.count(before.counted, -1);
      this.count(counted, +1);
    }
    const after = sortValuesOf(table, row);
    JOB_SORT_KEYS.forEach((key, position) => {
      const old = before.sortValues[position] as SortValue;
      const now = after[position] as SortValue;
      if (old === now || key === 'createdAt') return;
      this.built[key].remove(old, row);
      this.built[key].insert(now, row);
    });
    if (before.sortValues[0] !== after[0] || before.counted.state !== counted.state) {
      this.createdByState.remove(before.counted.state, before.sortValues[0] as number, row);
      this.createdByState.insert(counted.state, after[0] as number, row);
    }
    // positions 0 and 1 of JOB_SORT_KEYS are createdAt and name: the per-name index's keys
    if (before.sortValues[0] !== after[0] || before.sortValues[1] !== after[1]) this.reindexNameCreated(row, before.sortValues);
  }

  /** Removes the job and frees its row. */
  remove(row: number): void {
    this.buildAllIndexes();
    this.settleDeferred(row);
    this.beforeMutate?.(row);
    const table = this.table;
    const values = sortValuesOf(table, row);
    const state = table.stateOf(row);
    const name = table.nameOf(row);
    JOB_SORT_KEYS.forEach((key, position) => {
      const removed = key === 'createdAt' ? this.createdByState.remove(state, values[0] as number, row) : this.built[key].remove(values[position] as SortValue, row);
      assert(removed, `job ${table.id(row)} was in the ${key} index`);
    });
    this.nameIndex(name).remove(values[0] as number, row);
    if (this.nameIndex(name).size === 0) this.byNameCreated.delete(name);
    this.count(countedFieldsOf(table, row), -1);
    this.retainedBytesTotal -= table.bytesOf(row);
    this.byId.remove(row);
    this.byExternalId.delete(table.externalId(row));
    this.relationIndex.remove(row, table.relations.parentCodeOf(row), table.relations.rootCodeOf(row));
    table.free(row);
  }

  /** Other jobs of the same task name, newest createdAt first, as copies a list shows. */
  recentOfName(job: Job, limit: number): Job[] {
    const recent: Job[] = [];
    if (this.unbuilt?.nameIndexes === true) this.buildNameIndexes();
    const index = this.byNameCreated.get(job.name);
    if (index === undefined) return recent;
    for (const entry of index.scan('desc')) {
      if (this.table.id(entry.item) !== job.id) recent.push(this.table.readListed(entry.item));
      if (recent.length >= limit) break;
    }
    return recent;
  }

  /** The rows of the jobs in `active`, read from the state index's own partition (alerts look for stuck jobs). */
  activeRows(): Generator<number> {
    return this.rowsIn('active');
  }

  /** The rows of the jobs in `state`, by id, read from the state index's own partition; the store must not change while iterating. */
  *rowsIn(state: JobState): Generator<number> {
    for (const entry of this.indexes.state.scan('asc', { key: state, id: '' })) {
      if (entry.key !== state) return;
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
    for (const { item: row } of index.scan('desc')) {
      if (this.table.stateOf(row) === 'completed') return this.table.completedAtMsOf(row) ?? this.table.lastEventMsOf(row);
      if (++scanned >= scanMax) break;
    }
    return null;
  }

  /**
   * The jobs in `states`, oldest createdAt first (ties by id): the eviction's candidates,
   * read without passing the jobs of other states. The store must not change while iterating.
   */
  oldestOf(states: Iterable<JobState>): IterableIterator<IndexEntry<number>> {
    if (this.unbuilt !== null) this.buildIndex('createdAt');
    return this.createdByState.scanGroups(states, 'asc');
  }

  /** Every job as a copy, in id order; the store must not change while iterating. */
  *values(): Generator<Job> {
    for (const row of this.byId.values()) yield this.table.read(row);
  }

  /**
   * Every row, in id order, copied: what a snapshot captures in the same tick as it fixes its
   * log position. A typed array: copying a million rows into an array took 32-38 ms of that
   * tick, the snapshot's stall.
   */
  rows(): Uint32Array {
    return this.byId.copyInto(new Uint32Array(this.byId.size));
  }

  /** Files a row in the relation index under the codes it holds now. */
  private fileRelations(row: number): void {
    const relations = this.table.relations;
    this.relationIndex.add(row, relations.parentCodeOf(row), relations.rootCodeOf(row));
  }

  /** Whether the row's grouped fields pass a filter (null: no filter). */
  rowMatches(row: number, matches: ((fields: GroupFields) => boolean) | null): boolean {
    if (matches === null) return true;
    this.fields.row = row;
    return matches(this.fields);
  }

  /** A job's row, made in the table, into the lookups and (now or at the end of a deferral) the indexes. */
  private insert(row: number): void {
    this.buildAllIndexes(); // before the row is in byId: a build from byId's rows would index it twice
    this.byId.insert(row);
    this.byExternalId.add(row);
    if (this.deferred !== null) this.deferred.set(row, null);
    else this.index(row);
  }

  /** A row removed while its index work is deferred is indexed first, so removal finds its entries. */
  private settleDeferred(row: number): void {
    const deferred = this.deferred;
    if (deferred === null || !deferred.has(row)) return;
    const before = deferred.get(row)!;
    deferred.delete(row);
    if (before === null) this.index(row);
    else this.reindex(row, before);
  }

  /** Index entries, tallies and byte estimate of a row that has none yet. */
  private index(row: number): void {
    const table = this.table;
    const values = sortValuesOf(table, row);
    const counted = countedFieldsOf(table, row);
    JOB_SORT_KEYS.forEach((key, position) => {
      if (key === 'createdAt') this.createdByState.insert(counted.state, values[0] as number, row);
      else this.built[key].insert(values[position] as SortValue, row);
    });
    this.nameIndex(counted.name).insert(values[0] as number, row);
    this.count(counted, +1);
    this.retainedBytesTotal += table.bytesOf(row);
  }

  /**
   * Recovery: fills an empty store with rows already in its table (a snapshot's, see
   * JobTable.load), building each index in one ordered pass.
   */
  loadAll(rows: number[]): void {
    assert(this.size === 0, 'loadAll fills an empty job store');
    const { table, fields } = this;
    sortById(rows, table.idOrder);
    this.byId.loadSorted(rows);
    this.byExternalId = new JobsByKey(table.externalIdKeys, rows);
    for (const row of rows) {
      fields.row = row;
      this.countInTallies(fields, +1);
      this.retainedBytesTotal += table.bytesOf(row);
      this.fileRelations(row);
    }
    this.groups.addAll(eachRowFields(fields, rows));
    // The sorted indexes were a third of a restart: serving starts without them, and each is
    // built when first read, when anything changes, or by buildNextIndex (the server calls it
    // while idle after start-up). Until then nothing changes the jobs, so `rows` stays their
    // id order and their values are what the indexes would have been built from.
    if (rows.length > 0) this.unbuilt = { rowsById: rows, keys: new Set(JOB_SORT_KEYS), nameIndexes: true };
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
    const table = this.table;
    const valueOf = JOB_SORT_VALUE[key];
    const ordered = ascendingOrder(unbuilt.rowsById, (row) => valueOf(table, row));
    if (key === 'createdAt') this.createdByState.loadAscending(ordered.keys, ordered.items, (row) => table.stateOf(row));
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

  /** Per-name indexes from rows already in (createdAt, id) order: grouping keeps that order. */
  private loadNameIndexes(byCreatedAt: readonly number[]): void {
    const table = this.table;
    const byName = new Map<string, number[]>();
    for (const row of byCreatedAt) {
      const name = table.nameOf(row);
      const group = byName.get(name);
      if (group === undefined) byName.set(name, [row]);
      else group.push(row);
    }
    for (const [name, group] of byName) {
      const index = new SortedIndex(this.table.idOrder);
      index.loadAscending(
        group.map((row) => table.createdAtMsOf(row)),
        group,
      );
      this.byNameCreated.set(name, index);
    }
  }

  private reindexNameCreated(row: number, before: SortValue[]): void {
    const oldName = before[1] as string;
    const oldCreated = before[0] as number;
    const oldIndex = this.byNameCreated.get(oldName);
    if (oldIndex !== undefined) {
      oldIndex.remove(oldCreated, row);
      if (oldIndex.size === 0) this.byNameCreated.delete(oldName);
    }
    this.nameIndex(this.table.nameOf(row)).insert(this.table.createdAtMsOf(row), row);
  }

  private nameIndex(name: string): SortedIndex<number> {
    let index = this.byNameCreated.get(name);
    if (index === undefined) {
      index = new SortedIndex(this.table.idOrder);
      this.byNameCreated.set(name, index);
    }
    return index;
  }

  /** Jobs matching a filter on the grouped fields, without scanning when the groups allow. */
  countWhere(matches: (fields: GroupFields) => boolean): number {
    if (this.groups.usable) return this.groups.countWhere(matches);
    const fields = this.fields;
    let count = 0;
    for (const row of this.byId.values()) {
      fields.row = row;
      if (matches(fields)) count++;
    }
    return count;
  }

  /** A filter on the grouped fields, then on the row, as a filter of rows. */
  private rowMatcher(matches: ((fields: GroupFields) => boolean) | undefined, rowMatches?: (row: number) => boolean): ((row: number) => boolean) | undefined {
    if (matches === undefined) return rowMatches;
    const fields = this.fields;
    return (row) => {
      fields.row = row;
      return matches(fields) && (rowMatches === undefined || rowMatches(row));
    };
  }

  /** Whether a held row's grouped fields pass a filter of them. */
  rowHasFields(row: number, matches: (fields: GroupFields) => boolean): boolean {
    this.fields.row = row;
    return matches(this.fields);
  }

  /** Rows 0 .. rowSpan - 1 are every row the store's table has used (held or free): the size of a set of rows by number. */
  get rowSpan(): number {
    return this.table.rowSpan;
  }

  private indexedValuesOf(row: number): IndexedValues {
    return { sortValues: sortValuesOf(this.table, row), counted: countedFieldsOf(this.table, row), bytes: this.table.bytesOf(row) };
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

function countedFieldsOf(table: JobTable, row: number): CountedFields {
  return { name: table.nameOf(row), state: table.stateOf(row), queue: table.queueOf(row), workerId: table.workerOf(row), framework: table.frameworkOf(row) };
}

function sameCountedFields(a: CountedFields, b: CountedFields): boolean {
  return a.name === b.name && a.state === b.state && a.queue === b.queue && a.workerId === b.workerId && a.framework === b.framework;
}

/** A row's grouped fields, read from the table when asked: one object reused for every row a filter looks at. */
class RowFields implements GroupFields {
  row = 0;

  constructor(private readonly table: JobTable) {}

  get name(): string {
    return this.table.nameOf(this.row);
  }

  get state(): JobState {
    return this.table.stateOf(this.row);
  }

  get queue(): string | null {
    return this.table.queueOf(this.row);
  }

  get workerId(): string | null {
    return this.table.workerOf(this.row);
  }

  get framework(): GroupFields['framework'] {
    return this.table.frameworkOf(this.row);
  }
}

/** The reused fields object pointed at each row in turn. */
function* eachRowFields(fields: RowFields, rows: readonly number[]): Generator<GroupFields> {
  for (const row of rows) {
    fields.row = row;
    yield fields;
  }
}

export function isFinished(state: JobState): boolean {
  return FINISHED_STATES.has(state);
}
