/**
 * Every field of a job that the job table keeps as a column, in one list: its storage (the
 * array type, or a text or code column), how null is stored, and how an event's value is
 * merged into it. The job table (job-table.ts) allocates, grows, creates, frees, copies
 * and loads its columns from this list; the snapshot (job-columns.ts) writes and reads
 * them from it, and sizes its chunks by the texts; a job copy (`Job`, job-record.ts) has
 * one field per entry. Adding a field is adding it here (docs/architecture.md, "Adding a
 * job field", says what else to touch).
 *
 * Not here: a job's id and externalId (bytes in string columns, the table's identity of a
 * row), its state history (history-column.ts) and its state, which is the history's last
 * entry.
 */
import type { Framework } from '../ingest/states.ts';
import { NO_CODE } from './code-table.ts';

/**
 * The array a column is kept in:
 * - `Float64Array`: times and counts that may be unknown;
 * - `Uint16Array`, `Uint8Array`: small counts, and flags (0 or 1, read as a boolean);
 * - `Int32Array` with `codes`: codes into a code table of the connection (`names` for task
 *   names, queues, workers and frameworks, which few distinct values repeat; `texts` for
 *   errors and stack traces, which many failures of one bug share);
 * - `TextColumn`: a JSON text, UTF-8 bytes in segments (text-column.ts); `sparse` for a field
 *   few jobs have: such columns share one slot per row that has any (sparse-rows.ts), so a
 *   row without costs 4 bytes for all of them, not 4 in each.
 */
export type ColumnArray = 'Float64Array' | 'Uint16Array' | 'Uint8Array' | 'Int32Array' | 'TextColumn';

/**
 * How null is stored: NaN, code -1, no text; `never` for a column that always holds a
 * value (a new row starts at `initial`, or at what the creating event says).
 */
export type NullStored = 'NaN' | 'code -1' | 'no text' | 'never';

/**
 * How an event's value enters the column (`JobTable.merge`):
 * - `newest`: the newest event's value (every event has one);
 * - `newestOrFill`: a newer non-null value wins, an older event only fills a gap;
 * - `run`: as `newestOrFill`, for what belongs to one run: emptied when a new run begins
 *   (the last run's go to `attempts`), and not filled by an event of an earlier attempt;
 * - `append`: the event's lines are added after the held ones (the job's log and its count);
 * - `progress`: a number and an object together, the newer report replacing both (or
 *   filling them when neither is known), emptied when a new run begins;
 * - `extensions`: as `newestOrFill`, but two events of one instant complement each other key
 *   by key (BullMQ writes a job's `added` and `delayed` in one millisecond);
 * - a name of its own: a rule written out in `JobTable.merge` (createdAt, attempt,
 *   the time of the newest event), or `none` when no event sets it (it is set by an action
 *   or when a run ends).
 */
export type MergeRule = 'newest' | 'newestOrFill' | 'extensions' | 'run' | 'append' | 'progress' | 'createdAt' | 'attempt' | 'newestTime' | 'none';

export interface ColumnSpec {
  array: ColumnArray;
  null: NullStored;
  merge: MergeRule;
  /** for an `Int32Array` of codes: which code table */
  codes?: 'names' | 'texts';
  /** a new row's value where it is not null or set by the creating event */
  initial?: number;
  /** for a TextColumn: few jobs have one (see ColumnArray) */
  sparse?: boolean;
  /** the snapshot format that first wrote the column (absent: every format with job columns, 2 on); a chunk of an older format lacks it */
  sinceFormat?: number;
  /** what the field is, for the reader of this list */
  about: string;
}

export const JOB_COLUMNS = {
  framework: { array: 'Int32Array', codes: 'names', null: 'never', merge: 'newest', about: 'celery, bullmq or sidekiq, as ingested' },
  name: { array: 'Int32Array', codes: 'names', null: 'never', merge: 'newest', about: 'the task name' },
  queue: { array: 'Int32Array', codes: 'names', null: 'code -1', merge: 'newestOrFill', about: 'the queue' },
  workerId: { array: 'Int32Array', codes: 'names', null: 'code -1', merge: 'run', about: 'the worker of the current run' },
  error: { array: 'Int32Array', codes: 'texts', null: 'code -1', merge: 'run', about: "the current run's error" },
  stacktrace: { array: 'Int32Array', codes: 'texts', null: 'code -1', merge: 'run', about: "the current run's stack trace" },
  createdAtMs: { array: 'Float64Array', null: 'never', merge: 'createdAt', about: 'when the job was created: reported, else its earliest event' },
  createdAtReported: { array: 'Uint8Array', null: 'never', merge: 'createdAt', about: 'whether createdAt was reported, or is the earliest event time' },
  startedAtMs: { array: 'Float64Array', null: 'NaN', merge: 'run', about: 'when the current run started' },
  completedAtMs: { array: 'Float64Array', null: 'NaN', merge: 'run', about: 'when the current run finished' },
  attempt: { array: 'Float64Array', null: 'never', initial: 1, merge: 'attempt', about: 'the current run, 1 for the first' },
  maxRetries: { array: 'Float64Array', null: 'NaN', merge: 'newestOrFill', about: "the job system's retry limit" },
  progress: { array: 'Float64Array', null: 'NaN', merge: 'progress', about: 'how far the current run is, 0 to 1 (reported, or read from a progress object)' },
  lastEventMs: { array: 'Float64Array', null: 'never', initial: Number.NEGATIVE_INFINITY, merge: 'newestTime', about: 'the time of the newest event applied' },
  manualRetries: { array: 'Uint16Array', null: 'never', initial: 0, merge: 'none', sinceFormat: 9, about: 'runs added by a retry from jobwatch that the agent carried out' },
  logLines: { array: 'Uint16Array', null: 'never', initial: 0, merge: 'append', sinceFormat: 9, about: 'how many lines `logs` holds' },
  extensions: { array: 'TextColumn', null: 'no text', merge: 'extensions', about: 'framework-specific data, a JSON object' },
  args: { array: 'TextColumn', null: 'no text', merge: 'newestOrFill', sinceFormat: 9, about: "the job's arguments (any JSON), redacted and capped on ingest" },
  result: { array: 'TextColumn', sparse: true, null: 'no text', merge: 'run', sinceFormat: 9, about: "the current run's result (any JSON), redacted and capped on ingest" },
  progressData: { array: 'TextColumn', sparse: true, null: 'no text', merge: 'progress', sinceFormat: 9, about: 'progress reported as an object, as it came (redacted)' },
  logs: { array: 'TextColumn', sparse: true, null: 'no text', merge: 'append', sinceFormat: 9, about: "the job's log lines, a JSON array of strings, the newest kept within the caps" },
  attempts: { array: 'TextColumn', sparse: true, null: 'no text', merge: 'none', sinceFormat: 9, about: 'the earlier runs, a JSON array (attempt-history.ts), written when a run ends' },
  parentExternalId: { array: 'Int32Array', codes: 'names', null: 'code -1', merge: 'newestOrFill', sinceFormat: 10, about: "the job system's id of the parent job, in the same connection (relation-columns.ts)" },
  rootExternalId: { array: 'Int32Array', codes: 'names', null: 'code -1', merge: 'newestOrFill', sinceFormat: 10, about: "the job system's id of the workflow's first job, when the job system names it" },
} as const satisfies Record<string, ColumnSpec>;

export type JobColumnName = keyof typeof JOB_COLUMNS;
type ArrayOf<K extends JobColumnName> = (typeof JOB_COLUMNS)[K]['array'];
type NamesOf<A extends ColumnArray> = { [K in JobColumnName]: ArrayOf<K> extends A ? K : never }[JobColumnName];

export type TextColumnName = NamesOf<'TextColumn'>;
export type CodeColumnName = NamesOf<'Int32Array'>;
/** Columns held in a typed array of the table. */
export type TypedColumnName = Exclude<JobColumnName, TextColumnName>;

const ARRAYS = { Float64Array, Uint16Array, Uint8Array, Int32Array } as const;
type TypedArrayName = keyof typeof ARRAYS;
export type TypedColumns = { [K in TypedColumnName]: InstanceType<(typeof ARRAYS)[ArrayOf<K> & TypedArrayName]> };

/** Null in a code column. */
export { NO_CODE };

const names = Object.keys(JOB_COLUMNS) as JobColumnName[];
const specOf = (name: JobColumnName): ColumnSpec => JOB_COLUMNS[name];

export const TEXT_COLUMNS = names.filter((name) => specOf(name).array === 'TextColumn') as TextColumnName[];
/** Typed columns from the widest element to the narrowest: the order a snapshot carves them from one buffer, each aligned. */
export const TYPED_COLUMNS = (names.filter((name) => specOf(name).array !== 'TextColumn') as TypedColumnName[]).sort((a, b) => elementBytesOf(b) - elementBytesOf(a));

/** A new typed array for the column. */
export function newArrayOf<K extends TypedColumnName>(name: K, length: number): TypedColumns[K] {
  return new ARRAYS[specOf(name).array as TypedArrayName](length) as TypedColumns[K];
}

/** Bytes per element of a typed column. */
export function elementBytesOf(name: TypedColumnName): number {
  return ARRAYS[specOf(name).array as TypedArrayName].BYTES_PER_ELEMENT;
}

/** The value of a typed column in a new row: its initial value, else what stands for null (NaN, code -1). */
export function initialValueOf(name: TypedColumnName): number {
  const spec = specOf(name);
  if (spec.initial !== undefined) return spec.initial;
  return spec.codes !== undefined ? NO_CODE : spec.null === 'NaN' ? Number.NaN : 0;
}

/** Whether the column's null is NaN (read as null). */
export function isNullableNumber(name: TypedColumnName): boolean {
  return specOf(name).null === 'NaN';
}

/** The code table of a code column; undefined for other columns. */
export function codesOf(name: JobColumnName): 'names' | 'texts' | undefined {
  return specOf(name).codes;
}

/** Whether few jobs have the column's field (its text column shares the sparse rows' slots). */
export function isSparse(name: TextColumnName): boolean {
  return specOf(name).sparse === true;
}

/** Whether every snapshot format with job columns (2 on) has the column. */
export function inEveryFormat(name: JobColumnName): boolean {
  return specOf(name).sinceFormat === undefined;
}

/** The columns a merge rule applies to. */
export function columnsWhere(merge: MergeRule): JobColumnName[] {
  return names.filter((name) => specOf(name).merge === merge);
}

/** The fields of a job copy the columns give, with their types (framework narrowed). */
export interface JobColumnValues {
  framework: Framework;
  name: string;
  queue: string | null;
  workerId: string | null;
  error: string | null;
  stacktrace: string | null;
  createdAtMs: number;
  createdAtReported: boolean;
  startedAtMs: number | null;
  completedAtMs: number | null;
  attempt: number;
  maxRetries: number | null;
  progress: number | null;
  lastEventMs: number;
  manualRetries: number;
  logLines: number;
  extensions: string | null;
  args: string | null;
  result: string | null;
  progressData: string | null;
  logs: string | null;
  attempts: string | null;
  parentExternalId: string | null;
  rootExternalId: string | null;
}

// Every column has a field of the job copy, and every such field a column.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const everyColumnHasAField: Same<keyof JobColumnValues, JobColumnName> = true;
void everyColumnHasAField;
