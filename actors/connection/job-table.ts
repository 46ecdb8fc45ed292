/**
 * A connection's jobs as rows of columns: a job is a row number, and its fields live in the
 * columns that job-column-list.ts declares (typed arrays for numbers, flags and codes of
 * the connection's code tables; text columns for JSON texts), its id and externalId as bytes
 * in string columns (string-column.ts), its history in one packed column. A million jobs
 * are a few dozen arrays instead of a million objects and two million strings, and a
 * snapshot's columns load back by copying. The table allocates, grows, fills, frees,
 * copies and loads every column from the list; only the merge rules with a name of their
 * own are written out here.
 *
 * Columns grow by doubling; rows freed by retention and eviction are reused. A reader that
 * must find a job again later (the live stream, after the batch is durable) keeps its ref:
 * the row and its generation, which a freed row's next job does not share.
 *
 * The merge rules of an event are `merge`'s: the event with the newest timestamp decides
 * the state (ties: later arrival); an older event never moves the job backwards but still
 * lands in the history in timestamp order; a field takes a newer non-null value, and an
 * older event only fills gaps. What belongs to one run (the `run` and `progress` columns)
 * is moved to the job's earlier attempts and emptied when the newest event begins another
 * (`beginsNewRun`), and an event of an earlier attempt fills none of it.
 */
import type { JobEvent } from '../ingest/normalized-event.ts';
import { jsonText, retainedJobBytes } from '../ingest/event-bytes.ts';
import { JSON_OBJECT_BYTES_MAX } from '../ingest/json-object-limits.ts';
import { appendedLog, PAYLOAD_LIMIT_DEFAULTS, type PayloadLimits } from '../ingest/job-payload.ts';
import { JOB_STATES, type Framework, type JobState } from '../ingest/states.ts';
import { assert } from '../domain-error.ts';
import { outcomeOf, withAttempt, withLateFacts } from './attempt-history.ts';
import { CodeTable } from './code-table.ts';
import { HistoryColumn } from './history-column.ts';
import {
  codesOf,
  columnsWhere,
  initialValueOf,
  isNullableNumber,
  isSparse,
  JOB_COLUMNS,
  newArrayOf,
  NO_CODE,
  TEXT_COLUMNS,
  TYPED_COLUMNS,
  type JobColumnName,
  type TextColumnName,
  type TypedColumnName,
  type TypedColumns,
} from './job-column-list.ts';
import { nullForNaN } from './nullable-number.ts';
import { StringColumn } from './string-column.ts';
import { RelationColumns } from './relation-columns.ts';
import { SparseRows } from './sparse-rows.ts';
import { TextColumn } from './text-column.ts';
import type { ItemIds } from '../jobs/item-ids.ts';
import type { ItemKeys } from './jobs-by-key.ts';
import { entryCode, stateCodeOf } from './job-history.ts';
import { runDurationMs, type Job } from './job-record.ts';
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
  /** formats 4 to 7: characters of the extensions' texts */
  extensionBytes?: number;
  /** format 9 on: bytes each text column's buffer holds */
  textBytes?: Partial<Record<TextColumnName, number>>;
}

type CodeTables = { names: CodeTable; texts: CodeTable };

const RUN_COLUMNS = columnsWhere('run');
const NEWEST_OR_FILL_COLUMNS = columnsWhere('newestOrFill');
const NEWEST_COLUMNS = columnsWhere('newest');
const CODE_COLUMNS = TYPED_COLUMNS.filter((name) => codesOf(name) !== undefined);

/** An event's value for a column, as the column keeps it (texts as their JSON text). */
function eventValueOf(event: JobEvent, name: JobColumnName): string | number | undefined {
  return (event as unknown as Record<string, string | number | undefined>)[name];
}

export class JobTable {
  private capacity = 0;
  /** rows ever used: 0 .. rowsUsed - 1 are live or free */
  private rowsUsed = 0;
  private live = 0;
  private readonly freeRows: number[] = [];
  /**
   * Task names, queues, workers and frameworks in one code table; errors and stack traces in
   * another (the same failure's trace arrives with many jobs, and each copy parsed from a
   * request would otherwise be kept).
   */
  private readonly codeTables: CodeTables = { names: new CodeTable(), texts: new CodeTable() };
  private readonly history = new HistoryColumn();
  private readonly ids = new StringColumn();
  private readonly externalIds = new StringColumn();
  /** the typed columns of the list, by name */
  private readonly columns = {} as TypedColumns;
  /** the text columns of the list, by name */
  private readonly texts = {} as Record<TextColumnName, TextColumn>;
  /** the slots of the rows that hold a field few jobs have, shared by those fields' text columns */
  private readonly sparse = new SparseRows();
  /** the state, the history's last entry (a code of JOB_STATES) */
  private state = new Uint8Array(0);
  private generation = new Uint32Array(0);
  /** the parent and root externalIds, read as codes for the relation index (relation-columns.ts) */
  readonly relations = new RelationColumns(this.columns, this.codeTables.names);

  constructor(
    readonly connectionId: string,
    private readonly logLimits: Pick<PayloadLimits, 'logBytesMax' | 'logLinesMax'> = PAYLOAD_LIMIT_DEFAULTS,
  ) {
    for (const name of TYPED_COLUMNS) (this.columns as Record<TypedColumnName, unknown>)[name] = newArrayOf(name, 0);
    for (const name of TEXT_COLUMNS) this.texts[name] = new TextColumn(isSparse(name) ? this.sparse : null);
  }

  /** Jobs held. */
  get size(): number {
    return this.live;
  }

  /** Rows ever used, held or free: every row number is below it. */
  get rowSpan(): number {
    return this.rowsUsed;
  }

  /** Distinct names, queues, workers and frameworks the jobs hold (for tests of the code table's bound). */
  get distinctStrings(): number {
    return this.codeTables.names.size;
  }

  /** A new row for a job first seen in `event` (as created, before the event is merged into it). */
  create(id: string, event: JobEvent): number {
    const row = this.allocate();
    this.ids.set(row, id);
    this.externalIds.set(row, event.externalId);
    const columns = this.columns;
    for (const name of TYPED_COLUMNS) columns[name][row] = initialValueOf(name);
    columns.framework[row] = this.codeTables.names.acquire(event.framework);
    columns.name[row] = this.codeTables.names.acquire(event.name);
    columns.createdAtMs[row] = event.atMs;
    this.state[row] = stateCodeOf(event.state);
    return row;
  }

  /** A row holding `job` as it is (a format 1 snapshot's job, or a copy taken earlier). */
  insert(job: Job): number {
    const row = this.allocate();
    this.ids.set(row, job.id);
    this.externalIds.set(row, job.externalId);
    const values = job as unknown as Record<JobColumnName, string | number | boolean | null>;
    for (const name of TYPED_COLUMNS) {
      const value = values[name];
      const codes = codesOf(name);
      this.columns[name][row] = codes !== undefined ? this.codeTables[codes].acquire(value as string | null) : typeof value === 'boolean' ? Number(value) : value === null ? Number.NaN : (value as number);
    }
    for (const name of TEXT_COLUMNS) {
      const text = values[name] as string | null;
      if (text !== null) this.texts[name].set(row, text);
    }
    this.history.load(row, [job.history.length], Float64Array.from(job.history));
    this.state[row] = this.stateCodeFromHistory(row);
    return row;
  }

  /** What the table holds now (see JobTableSizes). */
  sizes(): JobTableSizes {
    const textBytes: Partial<Record<TextColumnName, number>> = {};
    for (const name of TEXT_COLUMNS) textBytes[name] = this.texts[name].heldBytes;
    return {
      rows: this.live,
      idBytes: this.ids.liveBytes,
      externalIdBytes: this.externalIds.liveBytes,
      historyEntries: this.history.liveEntries,
      textBytes,
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
    // Stryker disable next-line LogicalOperator,ConditionalExpression: sizing only, as above
    for (const name of TEXT_COLUMNS) this.texts[name].reserveBytes(sizes.textBytes?.[name] ?? (name === 'extensions' ? (sizes.extensionBytes ?? 0) : 0));
  }

  /**
   * Appends a snapshot's columns as new rows, in column order, copying the typed columns'
   * bytes into the table's; returns the first row (the rows are `first` to
   * `first + columns.count - 1`). A column the snapshot's format did not have gets its
   * initial value (null, or what job-column-list.ts says).
   */
  load(columns: LoadableJobColumns): number {
    const count = columns.count;
    const first = this.rowsUsed;
    this.ensureCapacity(first + count);
    this.rowsUsed += count;
    this.live += count;
    for (const name of TYPED_COLUMNS) {
      const bytes = columns.typed[name];
      if (bytes !== undefined) copyBytes(this.columns[name], first, bytes);
      else this.columns[name].fill(initialValueOf(name), first, first + count);
    }
    this.history.load(first, columns.historyLengths, columns.history);
    this.ids.setJoined(first, columns.ids, columns.idLengths);
    this.externalIds.setJoined(first, columns.externalIds, columns.externalIdLengths);
    // the codes are the chunk's own (into its strings), made the table's here
    for (const name of CODE_COLUMNS) {
      const table = this.codeTables[codesOf(name)!];
      const column = this.columns[name];
      const legacyTexts = columns.legacyTexts?.[name as 'error' | 'stacktrace'];
      for (let at = 0; at < count; at++) {
        const row = first + at;
        if (legacyTexts !== undefined) column[row] = table.acquire(legacyTexts[at]!);
        else column[row] = column[row] === NO_CODE ? NO_CODE : table.acquire(columns.strings[column[row]!]!);
      }
    }
    for (const name of TEXT_COLUMNS) this.loadTexts(name, first, columns);
    for (let row = first; row < first + count; row++) this.state[row] = this.stateCodeFromHistory(row);
    return first;
  }

  private loadTexts(name: TextColumnName, first: number, columns: LoadableJobColumns): void {
    const column = this.texts[name];
    const joined = columns.texts[name];
    if (joined !== undefined) {
      // a JSON text holds no 0 byte: one would start a header in the column
      if (joined.bytes.indexOf(0) >= 0) throw new Error(`a snapshot's ${name} texts hold a 0 byte: they are not JSON texts`);
      let at = 0;
      for (let index = 0; index < columns.count; index++) {
        const length = joined.lengths[index]!;
        if (length < 0) continue;
        column.setBytes(first + index, joined.bytes, at, at + length);
        at += length;
      }
      return;
    }
    // formats 2 to 7 kept extensions on their own: as objects (2, 3) or texts (4 to 7)
    if (name !== 'extensions' || columns.legacyExtensions === undefined) return;
    columns.legacyExtensions.forEach((extensions, index) => {
      if (extensions !== null) column.set(first + index, typeof extensions === 'string' ? extensions : jsonText(extensions));
    });
  }

  /** Frees a row for reuse; refs to it stop resolving. */
  free(row: number): void {
    assert(row < this.rowsUsed && this.ids.has(row), `job row ${row} is freed, but holds no job (freed twice?)`);
    for (const name of CODE_COLUMNS) {
      this.codeTables[codesOf(name)!].release(this.columns[name][row]!);
      this.columns[name][row] = NO_CODE;
    }
    for (const name of TEXT_COLUMNS) this.texts[name].clear(row);
    this.ids.clear(row);
    this.externalIds.clear(row);
    this.history.clear(row);
    // Stryker disable next-line ArithmeticOperator: the wrap only matters after a million reuses of one row
    this.generation[row] = (this.generation[row]! + 1) % GENERATIONS;
    this.freeRows.push(row);
    this.live--;
  }

  /** Applies an event to a job. Returns true when the event is the newest so far. */
  merge(row: number, event: JobEvent): boolean {
    const isNewest = event.atMs >= this.columns.lastEventMs[row]!;
    const beginsRun = isNewest && this.beginsNewRun(row, event);
    if (beginsRun) this.endRun(row);
    // an event of an earlier attempt (late, or overtaken by the next attempt's) fills nothing of the current run
    const ofCurrentRun = beginsRun || !this.isOfEarlierRun(row, event);
    this.addHistory(row, event.state, event.atMs);
    for (const name of NEWEST_OR_FILL_COLUMNS) this.take(name, row, eventValueOf(event, name), isNewest);
    this.take('extensions', row, this.extensionsAfter(row, event), isNewest);
    if (ofCurrentRun) {
      for (const name of RUN_COLUMNS) this.take(name, row, eventValueOf(event, name), isNewest);
      this.takeProgress(row, event, isNewest);
      if (isNewest && event.attempt !== undefined) this.columns.attempt[row] = event.attempt;
    } else {
      this.addLateFacts(row, event);
    }
    if (event.logs !== undefined) this.appendLog(row, event.logs, event.logLineCount ?? 0);
    if (isNewest) {
      for (const name of NEWEST_COLUMNS) this.take(name, row, eventValueOf(event, name), true);
      this.columns.lastEventMs[row] = event.atMs;
    }
    this.mergeCreatedAt(row, event, isNewest);
    return isNewest;
  }

  /** A field takes a newer value, and an older event's value only where it has none. */
  private take(name: JobColumnName, row: number, value: string | number | undefined, isNewest: boolean): void {
    if (value === undefined) return;
    const spec = JOB_COLUMNS[name];
    if (spec.array === 'TextColumn') {
      const column = this.texts[name as TextColumnName];
      if (!isNewest && column.has(row)) return;
      column.clear(row);
      column.set(row, value as string);
      return;
    }
    const column = this.columns[name as TypedColumnName];
    const codes = codesOf(name);
    if (codes !== undefined) {
      if (isNewest || column[row] === NO_CODE) column[row] = recode(this.codeTables[codes], column[row]!, value as string);
    } else if (isNewest || Number.isNaN(column[row]!)) column[row] = value as number;
  }

  /** Progress comes as a number, an object or both: a newer report replaces both, an older one fills them only when neither is known. */
  private takeProgress(row: number, event: JobEvent, isNewest: boolean): void {
    if (event.progress === undefined && event.progressData === undefined) return;
    const data = this.texts.progressData;
    if (!isNewest && (!Number.isNaN(this.columns.progress[row]!) || data.has(row))) return;
    this.columns.progress[row] = event.progress ?? Number.NaN;
    data.clear(row);
    if (event.progressData !== undefined) data.set(row, event.progressData);
  }

  private appendLog(row: number, lines: string, added: number): void {
    const logs = this.texts.logs;
    const appended = appendedLog(logs.getOrNull(row), this.columns.logLines[row]!, lines, added, this.logLimits);
    logs.clear(row);
    if (appended.lines > 0) logs.set(row, appended.text);
    this.columns.logLines[row] = appended.lines;
  }

  /**
   * Whether the newest event belongs to a run after the one the row holds: it names a later
   * attempt, or it started after the held run completed (a job system that retries without
   * counting attempts). A job's first event begins nothing: there is no run before it.
   */
  private beginsNewRun(row: number, event: JobEvent): boolean {
    if (this.history.length(row) === 0) return false;
    if (event.attempt !== undefined && event.attempt > this.columns.attempt[row]!) return true;
    // NaN (no completion held) compares false
    return event.startedAtMs !== undefined && event.startedAtMs > this.columns.completedAtMs[row]!;
  }

  /** An event that names an earlier attempt than the row's: what it reports is that attempt's, not the current run's. */
  private isOfEarlierRun(row: number, event: JobEvent): boolean {
    return event.attempt !== undefined && event.attempt < this.columns.attempt[row]!;
  }

  /**
   * Ends the run the row holds: it goes to the job's earlier attempts (attempt-history.ts)
   * and what belongs to one run is emptied, so a new run shows none of the last one's: no
   * negative duration while it runs, no earlier error on a job that then succeeds.
   */
  private endRun(row: number): void {
    const attempts = this.texts.attempts;
    const run = {
      attempt: this.columns.attempt[row]!,
      state: outcomeOf(this.stateOf(row)),
      startedAtMs: this.startedAtMsOf(row),
      finishedAtMs: this.completedAtMsOf(row),
      workerId: this.workerOf(row),
      error: this.codeTables.texts.stringOf(this.columns.error[row]!),
      stacktrace: this.codeTables.texts.stringOf(this.columns.stacktrace[row]!),
    };
    const text = withAttempt(attempts.getOrNull(row), run);
    attempts.clear(row);
    attempts.set(row, text);
    for (const name of RUN_COLUMNS) this.clearField(row, name);
    this.columns.progress[row] = Number.NaN;
    this.texts.progressData.clear(row);
  }

  /** What an event of an earlier attempt says of that attempt goes to its entry among the earlier attempts. */
  private addLateFacts(row: number, event: JobEvent): void {
    const attempts = this.texts.attempts;
    const text = withLateFacts(attempts.getOrNull(row), event.attempt!, {
      state: event.state,
      startedAtMs: event.startedAtMs,
      finishedAtMs: event.completedAtMs,
      workerId: event.workerId,
      error: event.error,
      stacktrace: event.stacktrace,
    });
    if (text === null) return;
    attempts.clear(row);
    attempts.set(row, text);
  }

  private clearField(row: number, name: JobColumnName): void {
    if (JOB_COLUMNS[name].array === 'TextColumn') {
      this.texts[name as TextColumnName].clear(row);
      return;
    }
    const column = this.columns[name as TypedColumnName];
    const codes = codesOf(name);
    if (codes !== undefined) {
      this.codeTables[codes].release(column[row]!);
      column[row] = NO_CODE;
    } else column[row] = initialValueOf(name as TypedColumnName);
  }

  /** One more run added by hand: a retry the agent reported carried out. */
  addManualRetry(row: number): void {
    this.columns.manualRetries[row] = Math.min(0xffff, this.columns.manualRetries[row]! + 1);
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
    return this.codeTables.names.stringOf(this.columns.name[row]!)!;
  }

  frameworkOf(row: number): Framework {
    return this.codeTables.names.stringOf(this.columns.framework[row]!) as Framework;
  }

  queueOf(row: number): string | null {
    return this.codeTables.names.stringOf(this.columns.queue[row]!);
  }

  workerOf(row: number): string | null {
    return this.codeTables.names.stringOf(this.columns.workerId[row]!);
  }

  errorOf(row: number): string | null {
    return this.codeTables.texts.stringOf(this.columns.error[row]!);
  }

  createdAtMsOf(row: number): number {
    return this.columns.createdAtMs[row]!;
  }

  createdAtReportedOf(row: number): boolean {
    return this.columns.createdAtReported[row] === 1;
  }

  startedAtMsOf(row: number): number | null {
    return nullForNaN(this.columns.startedAtMs[row]!);
  }

  completedAtMsOf(row: number): number | null {
    return nullForNaN(this.columns.completedAtMs[row]!);
  }

  durationMsOf(row: number): number | null {
    return runDurationMs(this.stateOf(row), this.startedAtMsOf(row), this.completedAtMsOf(row));
  }

  lastEventMsOf(row: number): number {
    return this.columns.lastEventMs[row]!;
  }

  manualRetriesOf(row: number): number {
    return this.columns.manualRetries[row]!;
  }

  /** The text column of a payload field: what a search of the arguments reads in place. */
  textColumn(name: TextColumnName): TextColumn {
    return this.texts[name];
  }

  /** When the current state began: the earliest entry of the trailing run of that state. */
  stateChangedAtMs(row: number): number | null {
    return this.history.currentRunStartMs(row);
  }

  /** The estimate of the job's memory the byte budget counts (event-bytes.ts): its client-sized strings and texts, and its history. */
  bytesOf(row: number): number {
    const texts = this.codeTables.texts;
    let characters = this.externalIds.lengthOf(row) + (texts.stringOf(this.columns.error[row]!)?.length ?? 0) + (texts.stringOf(this.columns.stacktrace[row]!)?.length ?? 0);
    for (const name of TEXT_COLUMNS) characters += this.texts[name].byteLength(row);
    return retainedJobBytes(characters, this.history.length(row));
  }

  /** Bytes of the row's texts: what a snapshot chunk of it holds beyond its fixed columns. */
  textBytesOf(row: number): number {
    let bytes = 0;
    for (const name of TEXT_COLUMNS) bytes += this.texts[name].byteLength(row);
    return bytes;
  }

  /** The job as an object: a copy, unaffected by later changes to the row. */
  read(row: number): Job {
    return this.readColumns(row, TEXT_COLUMNS);
  }

  /**
   * The job as a list shows it: a copy without the texts only its detail shows (arguments,
   * result, progress object, log, earlier attempts), which can be large. Never for a snapshot.
   */
  readListed(row: number): Job {
    return this.readColumns(row, LISTED_TEXTS);
  }

  private readColumns(row: number, texts: readonly TextColumnName[]): Job {
    const job = {
      id: this.ids.get(row),
      connectionId: this.connectionId,
      externalId: this.externalIds.get(row),
      state: this.stateOf(row),
      history: this.history.copy(row),
    } as Record<string, unknown>;
    for (const name of TYPED_COLUMNS) {
      const value = this.columns[name][row]!;
      const codes = codesOf(name);
      job[name] =
        codes !== undefined ? this.codeTables[codes].stringOf(value) : JOB_COLUMNS[name].array === 'Uint8Array' ? value === 1 : isNullableNumber(name) ? nullForNaN(value) : value;
    }
    for (const name of TEXT_COLUMNS) job[name] = texts.includes(name) ? this.texts[name].getOrNull(row) : null;
    return job as unknown as Job;
  }

  /**
   * Checks what the table states of itself and its columns: every held row has an id, a
   * history and the state of its last entry; free rows hold nothing; each code table counts
   * exactly the rows that hold its codes; each log's line count is its lines. Throws naming
   * the first thing found wrong. For tests: it reads every row.
   */
  checkInvariants(): void {
    const free = new Set(this.freeRows);
    assert(free.size === this.freeRows.length, 'a row is on the free list twice');
    assert(this.live === this.rowsUsed - free.size, `the table counts ${this.live} jobs, but ${this.rowsUsed - free.size} rows are not free`);
    const holders = { names: new Map<number, number>(), texts: new Map<number, number>() };
    for (let row = 0; row < this.rowsUsed; row++) {
      if (free.has(row)) {
        assert(!this.ids.has(row) && !this.externalIds.has(row), `free row ${row} holds an id`);
        for (const name of CODE_COLUMNS) assert(this.columns[name][row] === NO_CODE, `free row ${row} holds a ${name} code`);
        for (const name of TEXT_COLUMNS) assert(!this.texts[name].has(row), `free row ${row} holds a ${name} text`);
        continue;
      }
      assert(this.ids.has(row) && this.externalIds.has(row), `row ${row} holds a job without an id`);
      assert(this.history.length(row) > 0, `job ${this.ids.get(row)} has no history`);
      assert(this.state[row] === entryCode(this.history.last(row)), `job ${this.ids.get(row)}'s state is not its history's last`);
      for (const name of CODE_COLUMNS) {
        const code = this.columns[name][row]!;
        const counts = holders[codesOf(name)!];
        if (code !== NO_CODE) counts.set(code, (counts.get(code) ?? 0) + 1);
      }
      const logs = this.texts.logs.getOrNull(row);
      const lines = logs === null ? 0 : (JSON.parse(logs) as unknown[]).length;
      assert(lines === this.columns.logLines[row], `job ${this.ids.get(row)} counts ${this.columns.logLines[row]} log lines and holds ${lines}`);
    }
    for (const table of ['names', 'texts'] as const) this.codeTables[table].checkHolders(holders[table]);
    for (const name of TEXT_COLUMNS) this.texts[name].checkInvariants();
    const sparseColumns = TEXT_COLUMNS.filter(isSparse).map((name) => this.texts[name]);
    this.sparse.checkInvariants((slot) => sparseColumns.filter((column) => column.holdsSlot(slot)).length);
  }

  private stateCodeFromHistory(row: number): number {
    if (this.history.length(row) === 0) throw new Error(`job ${this.ids.get(row)} has no history: every job has at least the event that created it`);
    return entryCode(this.history.last(row));
  }

  /**
   * What an event's extensions leave on the row: a newer event's replace the row's whole; at
   * one instant (the row's newest event has the same timestamp) the two complement each
   * other, key by key with the later arrival's value, unless together they pass the size
   * limit of one object. Two entries written in one millisecond (BullMQ's `added` and
   * `delayed`) then keep what each said.
   */
  private extensionsAfter(row: number, event: JobEvent): string | undefined {
    const extensions = event.extensions;
    if (extensions === undefined) return undefined;
    const held = this.texts.extensions;
    if (event.atMs !== this.columns.lastEventMs[row] || !held.has(row)) return jsonText(extensions);
    const merged = { ...(JSON.parse(held.get(row)) as Record<string, unknown>), ...extensions };
    const text = jsonText(merged);
    return Buffer.byteLength(text) > JSON_OBJECT_BYTES_MAX ? jsonText(extensions) : text;
  }

  private mergeCreatedAt(row: number, event: JobEvent, isNewest: boolean): void {
    const { createdAtMs, createdAtReported } = this.columns;
    if (event.createdAtMs !== undefined) {
      if (isNewest || createdAtReported[row] === 0) {
        createdAtMs[row] = event.createdAtMs;
        createdAtReported[row] = 1;
      }
    } else if (createdAtReported[row] === 0 && event.atMs < createdAtMs[row]!) {
      createdAtMs[row] = event.atMs;
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
    for (const name of TYPED_COLUMNS) {
      const grownColumn = newArrayOf(name, capacity);
      grownColumn.set(this.columns[name] as never);
      (this.columns as Record<TypedColumnName, unknown>)[name] = grownColumn;
    }
    this.state = grown(this.state, new Uint8Array(capacity));
    this.generation = grown(this.generation, new Uint32Array(capacity));
    this.ids.ensureRows(capacity);
    this.externalIds.ensureRows(capacity);
    for (const name of TEXT_COLUMNS) this.texts[name].ensureRows(capacity);
    this.capacity = capacity;
  }
}

/** The texts a list reads: the extensions, for when a job is scheduled. */
const LISTED_TEXTS: readonly TextColumnName[] = ['extensions'];

/** The code of `value` in place of `held`. */
function recode(codes: CodeTable, held: number, value: string | null): number {
  // Stryker disable next-line ConditionalExpression: a fast path; releasing the code and taking it again gives the same code
  if (codes.stringOf(held) === value) return held;
  codes.release(held);
  return codes.acquire(value);
}

/** Copies a snapshot column's bytes into `column` from `row` on (same element type, platform byte order). */
function copyBytes(column: ArrayBufferView, row: number, bytes: Uint8Array): void {
  const elementBytes = (column as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
  new Uint8Array(column.buffer, column.byteOffset + row * elementBytes, bytes.byteLength).set(bytes);
}

function grown<A extends Uint8Array | Uint32Array>(from: A, to: A): A {
  to.set(from);
  return to;
}
