/**
 * Jobs as columns, the form a snapshot stores them in (snapshot formats 2 to 4): one typed
 * array per number field, the ids of a chunk as one string, and the few distinct task
 * names, queues, workers and frameworks as a table of codes. Decoding a column is a copy
 * of bytes instead of an object per job, and the strings that recovery would otherwise
 * share through a string pool arrive once per chunk. The job table (job-table.ts) loads
 * the columns read back as its rows, without an object per job.
 *
 * Number columns travel as the bytes of their typed array (platform byte order, little-
 * endian on every machine Bun runs on): msgpackr's own typed-array encoding needs an
 * option that changes other encodings too. Reading them does not copy them out of the
 * decoded chunk: the job table copies their bytes straight into its own columns (the chunk
 * is dropped right after, so nothing keeps a view into the snapshot file's buffer). On a
 * machine where touching fresh memory costs more than copying (page faults in a VM), every
 * intermediate buffer shows in the restart time.
 *
 * Why ids are joined rather than a string array: msgpackr decodes a run of short strings
 * as slices of one string holding all of them (names, queues, errors...), so every
 * revived id kept that whole string alive. Since format 4 the joined ids travel as Latin-1
 * bytes when every character fits a byte (always for ids, nearly always for externalIds):
 * the job table keeps them as bytes (string-column.ts), so a restart copies them where it
 * decoded 72 MB of text at 1M jobs (a quarter of the restore).
 */
import { detailsOfJob, type Job } from './job-record.ts';
import { jsonText } from '../ingest/event-bytes.ts';
import { nanForNull } from './nullable-number.ts';
import { latin1Bytes } from './string-column.ts';

/** Columns as built and read; `JobColumns` is the same with typed arrays as bytes. */
export interface TypedJobColumns {
  count: number;
  /** every id, concatenated, as Latin-1 bytes when every character fits a byte (format 4), else as a string; idLengths[i] is the length of the i-th */
  ids: string | Uint8Array;
  idLengths: Uint32Array;
  externalIds: string | Uint8Array;
  externalIdLengths: Uint32Array;
  /** the distinct framework, name, queue, worker, error and stacktrace strings; the columns below index it */
  strings: string[];
  framework: Int32Array;
  name: Int32Array;
  /** -1: null */
  queue: Int32Array;
  workerId: Int32Array;
  /** NaN: null, in every number column */
  createdAtMs: Float64Array;
  createdAtReported: Uint8Array;
  startedAtMs: Float64Array;
  completedAtMs: Float64Array;
  attempt: Float64Array;
  maxRetries: Float64Array;
  progress: Float64Array;
  lastEventMs: Float64Array;
  /** -1: null (format 4; formats 2 and 3 sent the texts, see StoredJobColumns) */
  error: Int32Array;
  stacktrace: Int32Array;
  /** as JSON text (format 4; formats 2 and 3 sent the objects, see StoredJobColumns) */
  extensions: Array<string | null>;
  /** every job's packed history entries (job-history.ts), concatenated; historyLengths[i] of them belong to the i-th */
  history: Float64Array;
  historyLengths: Uint32Array;
}

type TypedKeys = { [K in keyof TypedJobColumns]: TypedJobColumns[K] extends ArrayBufferView ? K : never }[keyof TypedJobColumns];

/**
 * Each job's parent and root externalIds as codes into the chunk's strings (-1: none), the
 * bytes of an Int32Array; format 10 on (an older chunk has neither: no job had relations).
 */
export interface RelationJobColumns {
  parentExternalId?: Uint8Array;
  rootExternalId?: Uint8Array;
}

export type JobColumns = Omit<TypedJobColumns, TypedKeys> & { [K in TypedKeys]: Uint8Array } & RelationJobColumns;

/** A chunk's columns as snapshots hold them: formats 2 and 3 sent each job's error and stacktrace as text, and its extensions as an object. */
export type StoredJobColumns =
  | JobColumns
  | (Omit<JobColumns, 'error' | 'stacktrace' | 'extensions'> & {
      error: Array<string | null>;
      stacktrace: Array<string | null>;
      extensions: Array<Record<string, unknown> | null>;
    });

const TYPED_KEYS = [
  'idLengths', 'externalIdLengths', 'framework', 'name', 'queue', 'workerId', 'error', 'stacktrace', 'createdAtMs', 'createdAtReported',
  'startedAtMs', 'completedAtMs', 'attempt', 'maxRetries', 'progress', 'lastEventMs', 'history', 'historyLengths',
] as const satisfies readonly TypedKeys[];

const bytesOf = (array: ArrayBufferView): Uint8Array => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);

/** A copy with a buffer of its own: aligned for any element type, and no view into the bytes it came from. */
const ownCopy = (bytes: Uint8Array): ArrayBuffer => Uint8Array.prototype.slice.call(bytes).buffer as ArrayBuffer;

function toWire(typed: TypedJobColumns): JobColumns {
  const wire = { ...typed } as unknown as JobColumns;
  for (const key of TYPED_KEYS) wire[key] = bytesOf(typed[key]);
  return wire;
}

/**
 * A chunk's columns as the job table loads them: the per-job lengths as numbers, every
 * other number column still the bytes of its typed array (the table copies them into its own
 * columns, see `JobTable.load`).
 */
export type LoadableJobColumns = Omit<StoredJobColumns, 'idLengths' | 'externalIdLengths' | 'historyLengths'> & {
  idLengths: Uint32Array;
  externalIdLengths: Uint32Array;
  historyLengths: Uint32Array;
};

/** Bytes per element of each number column, as `toJobColumns` wrote it. */
const ELEMENT_BYTES: Record<(typeof TYPED_KEYS)[number], number> = {
  idLengths: 4, externalIdLengths: 4, framework: 4, name: 4, queue: 4, workerId: 4, error: 4, stacktrace: 4, createdAtMs: 8, createdAtReported: 1,
  startedAtMs: 8, completedAtMs: 8, attempt: 8, maxRetries: 8, progress: 8, lastEventMs: 8, history: 8, historyLengths: 4,
};

function fromWire(wire: StoredJobColumns): LoadableJobColumns {
  for (const key of TYPED_KEYS) {
    const bytes = wire[key];
    if (bytes instanceof Uint8Array && bytes.length % ELEMENT_BYTES[key] !== 0) throw new Error(`a snapshot's job column of ${bytes.length} bytes is not whole ${ELEMENT_BYTES[key]}-byte numbers`);
  }
  const uint32s = (bytes: Uint8Array): Uint32Array => new Uint32Array(ownCopy(bytes));
  return {
    ...wire,
    idLengths: uint32s(wire.idLengths),
    externalIdLengths: uint32s(wire.externalIdLengths),
    historyLengths: uint32s(wire.historyLengths),
  };
}

const NO_STRING = -1;


/** A copy of `jobs` as they are now: later changes to the jobs do not reach it. */
export function toJobColumns(jobs: readonly Job[]): JobColumns {
  const count = jobs.length;
  const codes = new Map<string, number>();
  const strings: string[] = [];
  const code = (value: string | null): number => {
    if (value === null) return NO_STRING;
    let found = codes.get(value);
    if (found === undefined) {
      found = strings.length;
      strings.push(value);
      codes.set(value, found);
    }
    return found;
  };
  let historyTotal = 0;
  for (const job of jobs) historyTotal += job.history.length;
  // One buffer for all number columns, carved in order of alignment: a snapshot makes a
  // thousand chunks, and sixteen buffers each meant sixteen times the allocations.
  const buffer = new ArrayBuffer((7 * count + historyTotal) * 8 + 9 * count * 4 + count);
  let at = 0;
  const take = <A extends Float64Array | Uint32Array | Int32Array | Uint8Array>(make: new (buffer: ArrayBuffer, offset: number, length: number) => A, length: number): A => {
    const view = new make(buffer, at, length);
    at += view.byteLength;
    return view;
  };
  const columns: TypedJobColumns = {
    count,
    ids: '',
    createdAtMs: take(Float64Array, count),
    startedAtMs: take(Float64Array, count),
    completedAtMs: take(Float64Array, count),
    attempt: take(Float64Array, count),
    maxRetries: take(Float64Array, count),
    progress: take(Float64Array, count),
    lastEventMs: take(Float64Array, count),
    history: take(Float64Array, historyTotal),
    idLengths: take(Uint32Array, count),
    externalIds: '',
    externalIdLengths: take(Uint32Array, count),
    strings,
    framework: take(Int32Array, count),
    name: take(Int32Array, count),
    queue: take(Int32Array, count),
    workerId: take(Int32Array, count),
    historyLengths: take(Uint32Array, count),
    error: take(Int32Array, count),
    stacktrace: take(Int32Array, count),
    createdAtReported: take(Uint8Array, count),
    extensions: new Array<string | null>(count),
  };
  const ids: string[] = new Array<string>(count);
  const externalIds: string[] = new Array<string>(count);
  let historyAt = 0;
  for (let row = 0; row < count; row++) {
    const job = jobs[row]!;
    ids[row] = job.id;
    columns.idLengths[row] = job.id.length;
    externalIds[row] = job.externalId;
    columns.externalIdLengths[row] = job.externalId.length;
    columns.framework[row] = code(job.framework);
    columns.name[row] = code(job.name);
    columns.queue[row] = code(job.queue);
    columns.workerId[row] = code(job.workerId);
    columns.createdAtMs[row] = job.createdAtMs;
    columns.createdAtReported[row] = job.createdAtReported ? 1 : 0;
    columns.startedAtMs[row] = nanForNull(job.startedAtMs);
    columns.completedAtMs[row] = nanForNull(job.completedAtMs);
    columns.attempt[row] = job.attempt;
    columns.maxRetries[row] = nanForNull(job.maxRetries);
    columns.progress[row] = nanForNull(job.progress);
    columns.lastEventMs[row] = job.lastEventMs;
    const details = detailsOfJob(job);
    columns.error[row] = code(details.error);
    columns.stacktrace[row] = code(details.stacktrace);
    columns.extensions[row] = details.extensions === null ? null : jsonText(details.extensions);
    columns.history.set(job.history, historyAt);
    historyAt += job.history.length;
    columns.historyLengths[row] = job.history.length;
  }
  columns.ids = joined(ids);
  columns.externalIds = joined(externalIds);
  return { ...toWire(columns), ...relationColumnsOf(jobs, code) };
}

/** The jobs' parents and roots as codes of the chunk's strings (`code` adds a string to them). */
function relationColumnsOf(jobs: readonly Job[], code: (value: string | null) => number): Required<RelationJobColumns> {
  const parents = new Int32Array(jobs.length);
  const roots = new Int32Array(jobs.length);
  jobs.forEach((job, row) => {
    parents[row] = code(job.parentExternalId);
    roots[row] = code(job.rootExternalId);
  });
  return { parentExternalId: bytesOf(parents), rootExternalId: bytesOf(roots) };
}

/** Strings joined, as Latin-1 bytes when every character fits one. */
function joined(strings: string[]): string | Uint8Array {
  const text = strings.join('');
  return latin1Bytes(text) ?? text;
}

/** The columns of a snapshot chunk as the job table loads them, checked to agree on the number of jobs. */
export function readJobColumns(wire: StoredJobColumns): LoadableJobColumns {
  const columns = fromWire(wire);
  checkLengths(columns);
  return columns;
}

/** A snapshot's frames carry checksums; this catches a writer and a reader that disagree. */
function checkLengths(columns: LoadableJobColumns): void {
  const perJob = [columns.idLengths, columns.externalIdLengths, columns.historyLengths, columns.extensions];
  const perJobBytes = TYPED_KEYS.filter((key) => key !== 'history').map((key) => {
    const column = columns[key];
    return column instanceof Uint8Array ? column.byteLength / ELEMENT_BYTES[key] : column.length;
  });
  const sum = (lengths: Uint32Array): number => lengths.reduce((total, length) => total + length, 0);
  if (
    perJob.some((column) => column.length !== columns.count) ||
    perJobBytes.some((elements) => elements !== columns.count) ||
    sum(columns.historyLengths) * 8 !== columns.history.byteLength ||
    [columns.parentExternalId, columns.rootExternalId].some((codes) => codes !== undefined && codes.byteLength !== columns.count * 4) ||
    sum(columns.idLengths) !== columns.ids.length ||
    sum(columns.externalIdLengths) !== columns.externalIds.length
  ) {
    throw new Error(`a snapshot's job columns do not agree on ${columns.count} jobs`);
  }
}
