/**
 * A connection's jobs as rows of columns: a job is a row number, its fields live in typed
 * arrays (times, attempt, progress and retries as doubles, NaN for null; the state and
 * whether createdAt was reported as bytes; task name, queue, worker and framework as codes
 * of the connection's code table, error and stack trace as codes of a second one), its id
 * and externalId as bytes in string columns (string-column.ts), its rare extensions as
 * their JSON text in a third, its history in one packed column. A million jobs are a few dozen arrays
 * instead of a million objects and two million strings, and a snapshot's columns load back
 * by copying.
 *
 * Columns grow by doubling; rows freed by retention and eviction are reused. A reader that
 * must find a job again later (the live stream, after the batch is durable) keeps its ref:
 * the row and its generation, which a freed row's next job does not share.
 *
 * The merge rules of an event are `mergeEvent`'s: the event with the newest timestamp
 * decides the state (ties: later arrival); an older event never moves the job backwards but
 * still lands in the history in timestamp order; scalar fields take a newer non-null value,
 * and an older event only fills gaps.
 */
import type { JobEvent } from '../ingest/normalized-event.ts';
import { jsonText, rememberJson, retainedJobBytes } from '../ingest/event-bytes.ts';
import { JSON_OBJECT_BYTES_MAX } from '../ingest/json-object-limits.ts';
import { JOB_STATES, type Framework, type JobState } from '../ingest/states.ts';
import { CodeTable, NO_CODE } from './code-table.ts';
import { HistoryColumn } from './history-column.ts';
import { nanForNull, nullForNaN } from './nullable-number.ts';
import { StringColumn } from './string-column.ts';
import { RelationColumns } from './relation-columns.ts';
import type { ItemIds } from '../jobs/item-ids.ts';
import type { ItemKeys } from './jobs-by-key.ts';
import { entryCode, stateCodeOf } from './job-history.ts';
import { NO_DETAILS, type Job, type JobDetails } from './job-record.ts';
import type { LoadableJobColumns } from './job-columns.ts';

/** Generations kept per row in a ref: a ref outlives at most this many reuses of its row before it could name a later job. */
const GENERATIONS = 2 ** 20;
const ROWS_MAX = 2 ** 32;
const FIRST_CAPACITY = 64;


/** How much a table holds: a snapshot records it so that a restart sizes the table once. */
export interface JobTableSizes {
  rows: number;
  idBytes: number;
  externalIdBytes: number;
  historyEntries: number;
  /** absent in snapshots written before extensions were kept as text */
  extensionBytes?: number;
}


export class JobTable {
  private capacity = 0;
  /** rows ever used: 0 .. rowsUsed - 1 are live or free */
  private rowsUsed = 0;
  private live = 0;
  private readonly freeRows: number[] = [];
  private readonly codes = new CodeTable();
  private readonly history = new HistoryColumn();
  private readonly ids = new StringColumn();
  private readonly externalIds = new StringColumn();
  /**
   * Error texts and stack traces as codes of a table of their own: the same failure's trace
   * arrives with many jobs, and each copy parsed from a request would otherwise be kept.
   */
  private readonly texts = new CodeTable();
  private error = new Int32Array(0);
  private stacktrace = new Int32Array(0);
  /**
   * Extensions as their JSON text, no string for most jobs: parsed objects cost ~470 B a job
   * that has them (measured at 1M jobs, a tenth of them with a small object), held cells
   * among the request's garbage, and were most of a restart's decoding.
   */
  private readonly extensions = new StringColumn();
  private framework = new Int32Array(0);
  private name = new Int32Array(0);
  private queue = new Int32Array(0);
  private worker = new Int32Array(0);
  private state = new Uint8Array(0);
  private createdAtReported = new Uint8Array(0);
  private createdAtMs = new Float64Array(0);
  private startedAtMs = new Float64Array(0);
  private completedAtMs = new Float64Array(0);
  private attempt = new Float64Array(0);
  private maxRetries = new Float64Array(0);
  private progress = new Float64Array(0);
  private lastEventMs = new Float64Array(0);
  private generation = new Uint32Array(0);
  /** the parent and root externalIds (relation-columns.ts), codes of the names table */
  readonly relations = new RelationColumns(this.codes);

  constructor(readonly connectionId: string) {}

  /** Jobs held. */
  get size(): number {
    return this.live;
  }

  /** Distinct names, queues, workers and frameworks the jobs hold (for tests of the code table's bound). */
  get distinctStrings(): number {
    return this.codes.size;
  }

  /** A new row for a job first seen in `event` (as created, before the event is merged into it). */
  create(id: string, event: JobEvent): number {
    const row = this.allocate();
    this.ids.set(row, id);
    this.externalIds.set(row, event.externalId);
    this.error[row] = this.stacktrace[row] = NO_CODE;
    this.framework[row] = this.codes.acquire(event.framework);
    this.name[row] = this.codes.acquire(event.name);
    this.queue[row] = NO_CODE;
    this.worker[row] = NO_CODE;
    this.state[row] = stateCodeOf(event.state);
    this.createdAtReported[row] = 0;
    this.createdAtMs[row] = event.atMs;
    this.startedAtMs[row] = Number.NaN;
    this.completedAtMs[row] = Number.NaN;
    this.attempt[row] = 1;
    this.maxRetries[row] = Number.NaN;
    this.progress[row] = Number.NaN;
    this.lastEventMs[row] = Number.NEGATIVE_INFINITY;
    this.relations.empty(row);
    return row;
  }

  /** A row holding `job` as it is (a format 1 snapshot's job, or a copy taken earlier). */
  insert(job: Job): number {
    const row = this.allocate();
    this.ids.set(row, job.id);
    this.externalIds.set(row, job.externalId);
    this.error[row] = this.texts.acquire(job.details?.error ?? null);
    this.stacktrace[row] = this.texts.acquire(job.details?.stacktrace ?? null);
    this.setExtensions(row, job.details?.extensions ?? null);
    this.framework[row] = this.codes.acquire(job.framework);
    this.name[row] = this.codes.acquire(job.name);
    this.queue[row] = this.codes.acquire(job.queue);
    this.worker[row] = this.codes.acquire(job.workerId);
    this.createdAtReported[row] = job.createdAtReported ? 1 : 0;
    this.createdAtMs[row] = job.createdAtMs;
    this.startedAtMs[row] = nanForNull(job.startedAtMs);
    this.completedAtMs[row] = nanForNull(job.completedAtMs);
    this.attempt[row] = job.attempt;
    this.maxRetries[row] = nanForNull(job.maxRetries);
    this.progress[row] = nanForNull(job.progress);
    this.lastEventMs[row] = job.lastEventMs;
    this.relations.set(row, job.parentExternalId, job.rootExternalId);
    this.history.load(row, [job.history.length], Float64Array.from(job.history));
    this.state[row] = this.stateCodeFromHistory(row);
    return row;
  }

  /** What the table holds now (see JobTableSizes). */
  sizes(): JobTableSizes {
    return {
      rows: this.live,
      idBytes: this.ids.liveBytes,
      externalIdBytes: this.externalIds.liveBytes,
      historyEntries: this.history.liveEntries,
      extensionBytes: this.extensions.liveBytes,
    };
  }

  /** Room for `sizes` more at once: a restart that knows what it will load grows each column once, not by doubling. */
  // Stryker disable next-line BlockStatement,ArithmeticOperator,BooleanLiteral,LogicalOperator: sizing only; the columns grow when rows come either way
  reserve(sizes: JobTableSizes): void {
    // Stryker disable next-line ArithmeticOperator,BooleanLiteral: sizing only, as above
    this.ensureCapacity(this.rowsUsed + sizes.rows, true);
    this.history.makeRoom(this.capacity, sizes.historyEntries);
    this.ids.reserveBytes(sizes.idBytes);
    this.externalIds.reserveBytes(sizes.externalIdBytes);
    // Stryker disable next-line LogicalOperator: sizing only, as above
    this.extensions.reserveBytes(sizes.extensionBytes ?? 0);
  }

  /**
   * Appends a snapshot's columns as new rows, in column order, copying the number columns'
   * bytes into the table's; returns the first row (the rows are `first` to
   * `first + columns.count - 1`).
   */
  load(columns: LoadableJobColumns): number {
    const count = columns.count;
    const first = this.rowsUsed;
    this.ensureCapacity(first + count);
    this.rowsUsed += count;
    this.live += count;
    copyBytes(this.createdAtMs, first, columns.createdAtMs);
    copyBytes(this.startedAtMs, first, columns.startedAtMs);
    copyBytes(this.completedAtMs, first, columns.completedAtMs);
    copyBytes(this.attempt, first, columns.attempt);
    copyBytes(this.maxRetries, first, columns.maxRetries);
    copyBytes(this.progress, first, columns.progress);
    copyBytes(this.lastEventMs, first, columns.lastEventMs);
    copyBytes(this.createdAtReported, first, columns.createdAtReported);
    // the codes of the chunk's own string table, made the table's codes below
    copyBytes(this.framework, first, columns.framework);
    copyBytes(this.name, first, columns.name);
    copyBytes(this.queue, first, columns.queue);
    copyBytes(this.worker, first, columns.workerId);
    this.history.load(first, columns.historyLengths, columns.history);
    this.ids.setJoined(first, columns.ids, columns.idLengths);
    this.externalIds.setJoined(first, columns.externalIds, columns.externalIdLengths);
    const { codes, texts } = this;
    const code = (from: number): number => (from === NO_CODE ? NO_CODE : codes.acquire(columns.strings[from]!));
    const textCode = (from: number): number => (from === NO_CODE ? NO_CODE : texts.acquire(columns.strings[from]!));
    const { error, stacktrace } = columns;
    // format 4 sends codes into the chunk's strings; formats 2 and 3 the texts themselves
    if (error instanceof Uint8Array) copyBytes(this.error, first, error);
    if (stacktrace instanceof Uint8Array) copyBytes(this.stacktrace, first, stacktrace);
    for (let at = 0; at < count; at++) {
      const row = first + at;
      this.error[row] = error instanceof Uint8Array ? textCode(this.error[row]!) : texts.acquire(error[at]!);
      this.stacktrace[row] = stacktrace instanceof Uint8Array ? textCode(this.stacktrace[row]!) : texts.acquire(stacktrace[at]!);
      const extensions = columns.extensions[at]!;
      // format 4 sends the JSON text, formats 2 and 3 the object
      if (extensions !== null) this.extensions.set(row, typeof extensions === 'string' ? extensions : jsonText(extensions));
      this.framework[row] = code(this.framework[row]!);
      this.name[row] = code(this.name[row]!);
      this.queue[row] = code(this.queue[row]!);
      this.worker[row] = code(this.worker[row]!);
      this.state[row] = this.stateCodeFromHistory(row);
    }
    this.loadRelations(first, columns);
    return first;
  }

  /** Frees a row for reuse; refs to it stop resolving. */
  free(row: number): void {
    this.codes.release(this.framework[row]!);
    this.codes.release(this.name[row]!);
    this.codes.release(this.queue[row]!);
    this.codes.release(this.worker[row]!);
    this.texts.release(this.error[row]!);
    this.texts.release(this.stacktrace[row]!);
    this.framework[row] = this.name[row] = this.queue[row] = this.worker[row] = this.error[row] = this.stacktrace[row] = NO_CODE;
    this.ids.clear(row);
    this.externalIds.clear(row);
    this.extensions.clear(row);
    this.history.clear(row);
    this.relations.release(row);
    // Stryker disable next-line ArithmeticOperator: the wrap only matters after a million reuses of one row
    this.generation[row] = (this.generation[row]! + 1) % GENERATIONS;
    this.freeRows.push(row);
    this.live--;
  }

  /** Applies an event to a job. Returns true when the event is the newest so far. */
  merge(row: number, event: JobEvent): boolean {
    const isNewest = event.atMs >= this.lastEventMs[row]!;
    this.addHistory(row, event.state, event.atMs);
    takeCode(this.codes, this.queue, row, event.queue, isNewest);
    takeCode(this.codes, this.worker, row, event.workerId, isNewest);
    takeCode(this.texts, this.error, row, event.error, isNewest);
    takeCode(this.texts, this.stacktrace, row, event.stacktrace, isNewest);
    if (event.extensions !== undefined && (isNewest || !this.extensions.has(row))) this.setExtensions(row, this.extensionsAfter(row, event.atMs, event.extensions));
    takeNumber(this.maxRetries, row, event.maxRetries, isNewest);
    takeNumber(this.progress, row, event.progress, isNewest);
    takeNumber(this.startedAtMs, row, event.startedAtMs, isNewest);
    takeNumber(this.completedAtMs, row, event.completedAtMs, isNewest);
    if (isNewest) {
      this.name[row] = recode(this.codes, this.name[row]!, event.name);
      this.framework[row] = recode(this.codes, this.framework[row]!, event.framework);
      if (event.attempt !== undefined) this.attempt[row] = event.attempt;
      this.lastEventMs[row] = event.atMs;
    }
    this.mergeCreatedAt(row, event, isNewest);
    this.relations.merge(row, event, isNewest);
    return isNewest;
  }

  /** Records a state at a time; the job's state is always the last entry's. */
  addHistory(row: number, state: JobState, atMs: number): void {
    this.history.insert(row, atMs, stateCodeOf(state));
    this.state[row] = entryCode(this.history.last(row));
  }

  /** Takes back an entry `addHistory` made (a revoke or retry that did not happen); false when it is no longer there. */
  removeHistory(row: number, state: JobState, atMs: number): boolean {
    if (!this.history.remove(row, atMs, stateCodeOf(state))) return false;
    this.state[row] = entryCode(this.history.last(row));
    return true;
  }

  /** A number that finds this job again while it lives (`rowOfRef`), and never a later job in its row. */
  refOf(row: number): number {
    return this.generation[row]! * ROWS_MAX + row;
  }

  /** The row of a ref, or -1 once its job is gone. */
  rowOfRef(ref: number): number {
    const row = ref % ROWS_MAX;
    return row < this.rowsUsed && this.ids.has(row) && this.generation[row] === (ref - row) / ROWS_MAX ? row : -1;
  }

  id(row: number): string {
    return this.ids.get(row);
  }

  /** Rows in the order of their ids, compared in the id column without making a string: what every index of rows breaks ties by. */
  readonly idOrder: ItemIds<number> = {
    idOf: (row) => this.ids.get(row),
    compareTo: (row, id) => this.ids.compareTo(row, id),
    compareItems: (a, b) => this.ids.compareRows(a, b),
  };

  externalId(row: number): string {
    return this.externalIds.get(row);
  }

  /** Rows by their externalId, compared and hashed in the column without making a string: the lookup by externalId. */
  readonly externalIdKeys: ItemKeys<number> = {
    keyOf: (row) => this.externalIds.get(row),
    hasKey: (row, key) => this.externalIds.equals(row, key),
    hashFrom: (row, start) => this.externalIds.hashFrom(row, start),
  };

  stateOf(row: number): JobState {
    return JOB_STATES[this.state[row]!]!;
  }

  nameOf(row: number): string {
    return this.codes.stringOf(this.name[row]!)!;
  }

  frameworkOf(row: number): Framework {
    return this.codes.stringOf(this.framework[row]!) as Framework;
  }

  queueOf(row: number): string | null {
    return this.codes.stringOf(this.queue[row]!);
  }

  workerOf(row: number): string | null {
    return this.codes.stringOf(this.worker[row]!);
  }

  createdAtMsOf(row: number): number {
    return this.createdAtMs[row]!;
  }

  createdAtReportedOf(row: number): boolean {
    return this.createdAtReported[row] === 1;
  }

  startedAtMsOf(row: number): number | null {
    return nullForNaN(this.startedAtMs[row]!);
  }

  completedAtMsOf(row: number): number | null {
    return nullForNaN(this.completedAtMs[row]!);
  }

  durationMsOf(row: number): number | null {
    return nullForNaN(this.completedAtMs[row]! - this.startedAtMs[row]!);
  }

  lastEventMsOf(row: number): number {
    return this.lastEventMs[row]!;
  }

  detailsOf(row: number): JobDetails {
    return this.detailsOrNull(row) ?? NO_DETAILS;
  }

  /** When the current state began: the earliest entry of the trailing run of that state. */
  stateChangedAtMs(row: number): number | null {
    return this.history.currentRunStartMs(row);
  }

  /** The estimate of the job's memory the byte budget counts (event-bytes.ts). */
  bytesOf(row: number): number {
    const characters =
      this.externalIds.lengthOf(row) +
      (this.texts.stringOf(this.error[row]!)?.length ?? 0) +
      (this.texts.stringOf(this.stacktrace[row]!)?.length ?? 0) +
      (this.extensions.has(row) ? this.extensions.lengthOf(row) : 0);
    return retainedJobBytes(characters, this.history.length(row));
  }

  /** The job as an object: a copy, unaffected by later changes to the row. */
  read(row: number): Job {
    return {
      id: this.ids.get(row),
      connectionId: this.connectionId,
      externalId: this.externalIds.get(row),
      framework: this.frameworkOf(row),
      name: this.nameOf(row),
      queue: this.queueOf(row),
      state: this.stateOf(row),
      createdAtMs: this.createdAtMs[row]!,
      createdAtReported: this.createdAtReported[row] === 1,
      startedAtMs: this.startedAtMsOf(row),
      completedAtMs: this.completedAtMsOf(row),
      workerId: this.workerOf(row),
      details: this.detailsOrNull(row),
      attempt: this.attempt[row]!,
      maxRetries: nullForNaN(this.maxRetries[row]!),
      progress: nullForNaN(this.progress[row]!),
      history: this.history.copy(row),
      lastEventMs: this.lastEventMs[row]!,
      parentExternalId: this.relations.parentOf(row),
      rootExternalId: this.relations.rootOf(row),
    };
  }

  /** A snapshot chunk's relation codes (format 10 on; older chunks have none). */
  private loadRelations(first: number, columns: LoadableJobColumns): void {
    const parents = columns.parentExternalId === undefined ? null : new Int32Array(ownBytes(columns.parentExternalId));
    const roots = columns.rootExternalId === undefined ? null : new Int32Array(ownBytes(columns.rootExternalId));
    const string = (codes: Int32Array | null, at: number): string | null => {
      const from = codes === null ? NO_CODE : codes[at]!;
      return from === NO_CODE ? null : columns.strings[from]!;
    };
    for (let at = 0; at < columns.count; at++) this.relations.set(first + at, string(parents, at), string(roots, at));
  }

  private stateCodeFromHistory(row: number): number {
    if (this.history.length(row) === 0) throw new Error(`job ${this.ids.get(row)} has no history: every job has at least the event that created it`);
    return entryCode(this.history.last(row));
  }

  /** The row's error, stacktrace and extensions; null when all three are. */
  private detailsOrNull(row: number): JobDetails | null {
    const error = this.texts.stringOf(this.error[row]!);
    const stacktrace = this.texts.stringOf(this.stacktrace[row]!);
    const extensions = this.extensions.has(row) ? this.parsedExtensions(row) : null;
    return error === null && stacktrace === null && extensions === null ? null : { error, stacktrace, extensions };
  }

  /** The row's extensions as an object that knows its text: a snapshot writing it back as JSON does not serialize it again. */
  private parsedExtensions(row: number): Record<string, unknown> {
    const text = this.extensions.get(row);
    const parsed = JSON.parse(text) as Record<string, unknown>;
    rememberJson(parsed, text);
    return parsed;
  }

  /**
   * What an event's extensions leave on the row: a newer event's replace the row's whole; at
   * one instant (the row's newest event has the same timestamp) the two complement each
   * other, key by key with the later arrival's value, unless together they pass the size
   * limit of one object. Two entries written in one millisecond (BullMQ's `added` and
   * `delayed`) then keep what each said.
   */
  private extensionsAfter(row: number, atMs: number, extensions: Record<string, unknown>): Record<string, unknown> {
    if (atMs !== this.lastEventMs[row] || !this.extensions.has(row)) return extensions;
    const merged = { ...(JSON.parse(this.extensions.get(row)) as Record<string, unknown>), ...extensions };
    return Buffer.byteLength(jsonText(merged)) > JSON_OBJECT_BYTES_MAX ? extensions : merged;
  }

  private setExtensions(row: number, extensions: Record<string, unknown> | null): void {
    this.extensions.clear(row);
    if (extensions !== null) this.extensions.set(row, jsonText(extensions));
  }

  private mergeCreatedAt(row: number, event: JobEvent, isNewest: boolean): void {
    if (event.createdAtMs !== undefined) {
      if (isNewest || this.createdAtReported[row] === 0) {
        this.createdAtMs[row] = event.createdAtMs;
        this.createdAtReported[row] = 1;
      }
    } else if (this.createdAtReported[row] === 0 && event.atMs < this.createdAtMs[row]!) {
      this.createdAtMs[row] = event.atMs;
    }
  }

  private allocate(): number {
    let row = this.freeRows.pop();
    if (row === undefined) {
      row = this.rowsUsed++;
      this.ensureCapacity(this.rowsUsed);
      this.history.ensureRows(this.rowsUsed);
    }
    this.live++;
    return row;
  }

  /** Room for `rows` rows: the columns double until they have it, or with `exactly` grow to just that. */
  // Stryker disable next-line BooleanLiteral: sizing only: exact room is room enough
  private ensureCapacity(rows: number, exactly = false): void {
    // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: a guard for refs (row + generation * 2^32) no test reaches: four billion rows
    if (rows > ROWS_MAX) throw new Error(`a connection's job table holds at most ${ROWS_MAX} rows`);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: growing when not needed only copies the columns once more
    if (rows <= this.capacity) return;
    let capacity = exactly ? rows : Math.max(FIRST_CAPACITY, this.capacity);
    // Stryker disable next-line EqualityOperator: one doubling more only leaves more room
    while (capacity < rows) capacity *= 2;
    this.framework = grown(this.framework, new Int32Array(capacity));
    this.name = grown(this.name, new Int32Array(capacity));
    this.queue = grown(this.queue, new Int32Array(capacity));
    this.worker = grown(this.worker, new Int32Array(capacity));
    this.error = grown(this.error, new Int32Array(capacity));
    this.stacktrace = grown(this.stacktrace, new Int32Array(capacity));
    this.state = grown(this.state, new Uint8Array(capacity));
    this.createdAtReported = grown(this.createdAtReported, new Uint8Array(capacity));
    this.createdAtMs = grown(this.createdAtMs, new Float64Array(capacity));
    this.startedAtMs = grown(this.startedAtMs, new Float64Array(capacity));
    this.completedAtMs = grown(this.completedAtMs, new Float64Array(capacity));
    this.attempt = grown(this.attempt, new Float64Array(capacity));
    this.maxRetries = grown(this.maxRetries, new Float64Array(capacity));
    this.progress = grown(this.progress, new Float64Array(capacity));
    this.lastEventMs = grown(this.lastEventMs, new Float64Array(capacity));
    this.generation = grown(this.generation, new Uint32Array(capacity));
    this.relations.grow(capacity);
    this.ids.ensureRows(capacity);
    this.externalIds.ensureRows(capacity);
    this.extensions.ensureRows(capacity);
    this.capacity = capacity;
  }
}

/** The code of `value` in place of `held`. */
function recode(codes: CodeTable, held: number, value: string | null): number {
  // Stryker disable next-line ConditionalExpression: a fast path; releasing the code and taking it again gives the same code
  if (codes.stringOf(held) === value) return held;
  codes.release(held);
  return codes.acquire(value);
}

/** A coded field takes a newer value, and an older event's value only where it has none. */
function takeCode(codes: CodeTable, column: Int32Array, row: number, value: string | null | undefined, isNewest: boolean): void {
  if (value !== undefined && (isNewest || column[row] === NO_CODE)) column[row] = recode(codes, column[row]!, value);
}

/** A number field takes a newer value, and an older event's value only where it has none. */
function takeNumber(column: Float64Array, row: number, value: number | undefined, isNewest: boolean): void {
  if (value !== undefined && (isNewest || Number.isNaN(column[row]!))) column[row] = value;
}

/** A column's bytes in a buffer of their own, aligned for any element type. */
function ownBytes(bytes: Uint8Array): ArrayBuffer {
  return Uint8Array.prototype.slice.call(bytes).buffer as ArrayBuffer;
}

/** Copies a snapshot column's bytes into `column` from `row` on (same element type, platform byte order). */
function copyBytes(column: Float64Array | Int32Array | Uint8Array, row: number, bytes: Uint8Array): void {
  new Uint8Array(column.buffer, column.byteOffset + row * column.BYTES_PER_ELEMENT, bytes.byteLength).set(bytes);
}

function grown<A extends Int32Array | Uint8Array | Float64Array | Uint32Array>(from: A, to: A): A {
  to.set(from as never);
  return to;
}
