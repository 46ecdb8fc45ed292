/**
 * Jobs as columns, the form a snapshot stores them in (snapshot format 2): one typed
 * array per number field, the ids of a chunk as one string, and the few distinct task
 * names, queues, workers and frameworks as a table of codes. Decoding a column is a copy
 * of bytes instead of an object per job, and the strings that recovery would otherwise
 * share through a string pool arrive once per chunk. The job table (job-table.ts) loads
 * the columns read back as its rows, without an object per job.
 *
 * Number columns travel as the bytes of their typed array (platform byte order, little-
 * endian on every machine Bun runs on): msgpackr's own typed-array encoding needs an
 * option that changes other encodings too. Decoding copies them, which also keeps the
 * snapshot file's buffer from being held by views into it.
 *
 * Why ids are joined rather than a string array: msgpackr decodes a run of short strings
 * as slices of one string holding all of them (names, queues, errors...), so every
 * revived id kept that whole string alive. A joined column is a string holding ids only.
 */
import { detailsOfJob, type Job } from './job-record.ts';
import { nanForNull } from './nullable-number.ts';

/** Columns as built and read; `JobColumns` is the same with typed arrays as bytes. */
export interface TypedJobColumns {
  count: number;
  /** every id, concatenated; idLengths[i] is the length of the i-th */
  ids: string;
  idLengths: Uint32Array;
  externalIds: string;
  externalIdLengths: Uint32Array;
  /** the distinct framework, name, queue and worker strings; the columns below index it */
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
  error: Array<string | null>;
  stacktrace: Array<string | null>;
  extensions: Array<Record<string, unknown> | null>;
  /** every job's packed history entries (job-history.ts), concatenated; historyLengths[i] of them belong to the i-th */
  history: Float64Array;
  historyLengths: Uint32Array;
}

type TypedKeys = { [K in keyof TypedJobColumns]: TypedJobColumns[K] extends ArrayBufferView ? K : never }[keyof TypedJobColumns];

export type JobColumns = Omit<TypedJobColumns, TypedKeys> & { [K in TypedKeys]: Uint8Array };

const TYPED_KEYS = [
  'idLengths', 'externalIdLengths', 'framework', 'name', 'queue', 'workerId', 'createdAtMs', 'createdAtReported', 'startedAtMs',
  'completedAtMs', 'attempt', 'maxRetries', 'progress', 'lastEventMs', 'history', 'historyLengths',
] as const satisfies readonly TypedKeys[];

const bytesOf = (array: ArrayBufferView): Uint8Array => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);

/** A copy with a buffer of its own: aligned for any element type, and no view into the bytes it came from. */
const ownCopy = (bytes: Uint8Array): ArrayBuffer => Uint8Array.prototype.slice.call(bytes).buffer as ArrayBuffer;

function toWire(typed: TypedJobColumns): JobColumns {
  const wire = { ...typed } as unknown as JobColumns;
  for (const key of TYPED_KEYS) wire[key] = bytesOf(typed[key]);
  return wire;
}

function fromWire(wire: JobColumns): TypedJobColumns {
  const floats = (bytes: Uint8Array): Float64Array => new Float64Array(ownCopy(bytes));
  const int32s = (bytes: Uint8Array): Int32Array => new Int32Array(ownCopy(bytes));
  const uint32s = (bytes: Uint8Array): Uint32Array => new Uint32Array(ownCopy(bytes));
  const wholeElements = (bytes: Uint8Array, size: number): Uint8Array => {
    if (bytes.length % size !== 0) throw new Error(`a snapshot's job column of ${bytes.length} bytes is not whole ${size}-byte numbers`);
    return bytes;
  };
  return {
    ...wire,
    idLengths: uint32s(wholeElements(wire.idLengths, 4)),
    externalIdLengths: uint32s(wholeElements(wire.externalIdLengths, 4)),
    framework: int32s(wholeElements(wire.framework, 4)),
    name: int32s(wholeElements(wire.name, 4)),
    queue: int32s(wholeElements(wire.queue, 4)),
    workerId: int32s(wholeElements(wire.workerId, 4)),
    createdAtMs: floats(wholeElements(wire.createdAtMs, 8)),
    createdAtReported: new Uint8Array(ownCopy(wire.createdAtReported)),
    startedAtMs: floats(wholeElements(wire.startedAtMs, 8)),
    completedAtMs: floats(wholeElements(wire.completedAtMs, 8)),
    attempt: floats(wholeElements(wire.attempt, 8)),
    maxRetries: floats(wholeElements(wire.maxRetries, 8)),
    progress: floats(wholeElements(wire.progress, 8)),
    lastEventMs: floats(wholeElements(wire.lastEventMs, 8)),
    history: floats(wholeElements(wire.history, 8)),
    historyLengths: uint32s(wholeElements(wire.historyLengths, 4)),
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
  const buffer = new ArrayBuffer((7 * count + historyTotal) * 8 + 7 * count * 4 + count);
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
    createdAtReported: take(Uint8Array, count),
    error: new Array<string | null>(count),
    stacktrace: new Array<string | null>(count),
    extensions: new Array<Record<string, unknown> | null>(count),
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
    columns.error[row] = details.error;
    columns.stacktrace[row] = details.stacktrace;
    columns.extensions[row] = details.extensions;
    columns.history.set(job.history, historyAt);
    historyAt += job.history.length;
    columns.historyLengths[row] = job.history.length;
  }
  columns.ids = ids.join('');
  columns.externalIds = externalIds.join('');
  return toWire(columns);
}

/** The columns of a snapshot chunk as typed arrays of their own, checked to agree on the number of jobs. */
export function readJobColumns(wire: JobColumns): TypedJobColumns {
  const columns = fromWire(wire);
  checkLengths(columns);
  return columns;
}

/** A snapshot's frames carry checksums; this catches a writer and a reader that disagree. */
function checkLengths(columns: TypedJobColumns): void {
  const perJob = [
    columns.idLengths, columns.externalIdLengths, columns.framework, columns.name, columns.queue, columns.workerId,
    columns.createdAtMs, columns.createdAtReported, columns.startedAtMs, columns.completedAtMs, columns.attempt,
    columns.maxRetries, columns.progress, columns.lastEventMs, columns.error, columns.stacktrace, columns.extensions,
    columns.historyLengths,
  ];
  const sum = (lengths: Uint32Array): number => lengths.reduce((total, length) => total + length, 0);
  if (
    perJob.some((column) => column.length !== columns.count) ||
    sum(columns.idLengths) !== columns.ids.length ||
    sum(columns.externalIdLengths) !== columns.externalIds.length ||
    sum(columns.historyLengths) !== columns.history.length
  ) {
    throw new Error(`a snapshot's job columns do not agree on ${columns.count} jobs`);
  }
}
