/**
 * Jobs as columns, the form a snapshot stores them in (snapshot formats 2 to 6), driven by
 * the column list (job-column-list.ts): each typed column travels as the bytes of its
 * typed array (codes into the chunk's own table of strings), each text column as its
 * texts' UTF-8 bytes joined with their lengths, the ids of a chunk joined. Decoding a
 * column is a copy of bytes instead of an object per job, and the strings that recovery
 * would otherwise share through a string pool arrive once per chunk. The job table
 * (job-table.ts) loads the columns read back as its rows, without an object per job.
 *
 * Number columns travel as the bytes of their typed array (platform byte order, little-
 * endian on every machine Bun runs on): msgpackr's own typed-array encoding needs an
 * option that changes other encodings too. Reading them does not copy them out of the
 * decoded chunk: the job table copies their bytes straight into its own columns (the chunk
 * is dropped right after, so nothing keeps a view into the snapshot file's buffer).
 *
 * Why ids are joined rather than a string array: msgpackr decodes a run of short strings
 * as slices of one string holding all of them, so every revived id kept that whole string
 * alive. Since format 4 the joined ids travel as Latin-1 bytes when every character fits a
 * byte (always for ids, nearly always for externalIds): the job table keeps them as bytes
 * (string-column.ts), so a restart copies them.
 *
 * What older formats sent differently, and is still read: formats 2 and 3 each job's error
 * and stacktrace as text and its extensions as an object; formats 4 to 7 extensions as an
 * array of texts; formats 2 to 4 no runs added by hand, 2 to 5 no other column added since
 * (a column a chunk lacks loads as its initial value).
 */
import { elementBytesOf, JOB_COLUMNS, NO_CODE, TEXT_COLUMNS, TYPED_COLUMNS, type TextColumnName, type TypedColumnName } from './job-column-list.ts';
import type { Job } from './job-record.ts';
import { latin1Bytes } from './string-column.ts';

/** A text column of a chunk: its texts' UTF-8 bytes joined, and each job's length in bytes (-1: none) as the bytes of an Int32Array. */
export interface JoinedTexts {
  bytes: Uint8Array;
  lengths: Uint8Array;
}

/** A chunk's columns as snapshot format 9 writes them: the typed columns by name, as bytes. */
export type JobColumns = { [K in TypedColumnName]: Uint8Array } & {
  count: number;
  /** every id, concatenated, as Latin-1 bytes when every character fits a byte, else as a string; idLengths the bytes of a Uint32Array of each one's length */
  ids: string | Uint8Array;
  idLengths: Uint8Array;
  externalIds: string | Uint8Array;
  externalIdLengths: Uint8Array;
  /** the distinct strings the code columns of the chunk index */
  strings: string[];
  /** every job's packed history entries (job-history.ts), concatenated, as bytes of a Float64Array; historyLengths[i] of them belong to the i-th */
  history: Uint8Array;
  historyLengths: Uint8Array;
  texts: { [K in TextColumnName]: JoinedTexts };
};

/** A chunk's columns as any readable format holds them (see the file's comment). */
export type StoredJobColumns = Omit<JobColumns, TypedColumnName | 'texts' | 'error' | 'stacktrace'> &
  Partial<Record<Exclude<TypedColumnName, 'error' | 'stacktrace'>, Uint8Array>> & {
    /** codes (format 4 on) or, formats 2 and 3, the texts */
    error: Uint8Array | Array<string | null>;
    stacktrace: Uint8Array | Array<string | null>;
    /** format 9 on */
    texts?: Partial<Record<TextColumnName, JoinedTexts>>;
    /** formats 2 to 7: texts (4 to 7) or objects (2, 3) */
    extensions?: Array<string | Record<string, unknown> | null>;
  };

/**
 * A chunk's columns as the job table loads them: the per-job lengths as numbers, the typed
 * columns a format had as the bytes of their arrays (the table copies them into its own),
 * the texts with their lengths.
 */
export interface LoadableJobColumns {
  count: number;
  ids: string | Uint8Array;
  idLengths: Uint32Array;
  externalIds: string | Uint8Array;
  externalIdLengths: Uint32Array;
  strings: string[];
  history: Uint8Array;
  historyLengths: Uint32Array;
  typed: Partial<Record<TypedColumnName, Uint8Array>>;
  texts: Partial<Record<TextColumnName, { bytes: Uint8Array; lengths: Int32Array }>>;
  /** formats 2 and 3: errors and stack traces as texts */
  legacyTexts?: Partial<Record<'error' | 'stacktrace', Array<string | null>>>;
  /** formats 2 to 7 */
  legacyExtensions?: Array<string | Record<string, unknown> | null>;
}

/** A copy with a buffer of its own: aligned for any element type, and no view into the bytes it came from. */
const ownCopy = (bytes: Uint8Array): ArrayBuffer => Uint8Array.prototype.slice.call(bytes).buffer as ArrayBuffer;
const bytesOf = (array: ArrayBufferView): Uint8Array => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);

/** Bytes of a job's texts: what its share of a chunk is beyond its fixed columns (the snapshot cuts chunks by it). */
export function textBytesOfJob(job: Job): number {
  let bytes = 0;
  for (const name of TEXT_COLUMNS) {
    const text = job[name];
    if (text !== null) bytes += Buffer.byteLength(text);
  }
  return bytes;
}

/** A copy of `jobs` as they are now: later changes to the jobs do not reach it. */
export function toJobColumns(jobs: readonly Job[]): JobColumns {
  const count = jobs.length;
  const codes = new Map<string, number>();
  const strings: string[] = [];
  const code = (value: string | null): number => {
    if (value === null) return NO_CODE;
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
  // One buffer for all typed columns, carved widest first so each is aligned: a snapshot
  // makes a thousand chunks, and a buffer per column meant that many allocations more.
  let size = historyTotal * 8 + 3 * count * 4;
  for (const name of TYPED_COLUMNS) size += elementBytesOf(name) * count;
  const buffer = new ArrayBuffer(size);
  let at = 0;
  const take = <A extends ArrayBufferView>(make: new (buffer: ArrayBuffer, offset: number, length: number) => A, length: number): A => {
    const view = new make(buffer, at, length);
    at += view.byteLength;
    return view;
  };
  const history = take(Float64Array, historyTotal);
  const typed = {} as Record<TypedColumnName, Float64Array | Int32Array | Uint16Array | Uint8Array>;
  // widest first: the float64 columns, then (after the history) the 4-byte ones, the 2-byte ones, the flags
  for (const name of TYPED_COLUMNS.filter((each) => elementBytesOf(each) === 8)) typed[name] = take(Float64Array, count);
  const idLengths = take(Uint32Array, count);
  const externalIdLengths = take(Uint32Array, count);
  const historyLengths = take(Uint32Array, count);
  for (const name of TYPED_COLUMNS) {
    const elementBytes = elementBytesOf(name);
    if (elementBytes === 8) continue;
    typed[name] = elementBytes === 4 ? take(Int32Array, count) : elementBytes === 2 ? take(Uint16Array, count) : take(Uint8Array, count);
  }
  const ids: string[] = new Array<string>(count);
  const externalIds: string[] = new Array<string>(count);
  const texts = {} as Record<TextColumnName, Array<string | null>>;
  for (const name of TEXT_COLUMNS) texts[name] = new Array<string | null>(count);
  let historyAt = 0;
  for (let row = 0; row < count; row++) {
    const job = jobs[row]!;
    ids[row] = job.id;
    idLengths[row] = job.id.length;
    externalIds[row] = job.externalId;
    externalIdLengths[row] = job.externalId.length;
    for (const name of TYPED_COLUMNS) {
      const value = job[name];
      typed[name][row] = JOB_COLUMNS[name].array === 'Int32Array' ? code(value as string | null) : typeof value === 'boolean' ? Number(value) : value === null ? Number.NaN : (value as number);
    }
    for (const name of TEXT_COLUMNS) texts[name][row] = job[name];
    history.set(job.history, historyAt);
    historyAt += job.history.length;
    historyLengths[row] = job.history.length;
  }
  const wire = {
    count,
    ids: joined(ids),
    idLengths: bytesOf(idLengths),
    externalIds: joined(externalIds),
    externalIdLengths: bytesOf(externalIdLengths),
    strings,
    history: bytesOf(history),
    historyLengths: bytesOf(historyLengths),
    texts: {} as JobColumns['texts'],
  } as JobColumns;
  for (const name of TYPED_COLUMNS) wire[name] = bytesOf(typed[name]);
  for (const name of TEXT_COLUMNS) wire.texts[name] = joinedTexts(texts[name]);
  return wire;
}

/** Strings joined, as Latin-1 bytes when every character fits one. */
function joined(strings: string[]): string | Uint8Array {
  const text = strings.join('');
  return latin1Bytes(text) ?? text;
}

function joinedTexts(texts: Array<string | null>): JoinedTexts {
  const lengths = new Int32Array(texts.length);
  const parts: Buffer[] = [];
  texts.forEach((text, index) => {
    if (text === null) {
      lengths[index] = -1;
      return;
    }
    const bytes = Buffer.from(text, 'utf8');
    lengths[index] = bytes.length;
    parts.push(bytes);
  });
  const bytes = Buffer.concat(parts);
  return { bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), lengths: bytesOf(lengths) };
}

/** The columns of a snapshot chunk as the job table loads them, checked to agree on the number of jobs. */
export function readJobColumns(wire: StoredJobColumns): LoadableJobColumns {
  const count = wire.count;
  const disagree = (): never => {
    throw new Error(`a snapshot's job columns do not agree on ${count} jobs`);
  };
  const wholeNumbers = (bytes: Uint8Array, elementBytes: number): Uint8Array => {
    if (bytes.length % elementBytes !== 0) throw new Error(`a snapshot's job column of ${bytes.length} bytes is not whole ${elementBytes}-byte numbers`);
    return bytes;
  };
  const perJob = <A extends Uint32Array | Int32Array>(bytes: Uint8Array, make: new (buffer: ArrayBuffer) => A): A => {
    const array = new make(ownCopy(wholeNumbers(bytes, 4)));
    if (array.length !== count) disagree();
    return array;
  };
  const typed: LoadableJobColumns['typed'] = {};
  const legacyTexts: NonNullable<LoadableJobColumns['legacyTexts']> = {};
  for (const name of TYPED_COLUMNS) {
    const column = (wire as unknown as Record<string, Uint8Array | Array<string | null> | undefined>)[name];
    if (column === undefined) continue;
    if (Array.isArray(column)) {
      if (column.length !== count) disagree();
      legacyTexts[name as 'error' | 'stacktrace'] = column;
      continue;
    }
    if (wholeNumbers(column, elementBytesOf(name)).length / elementBytesOf(name) !== count) disagree();
    typed[name] = column;
  }
  const texts: LoadableJobColumns['texts'] = {};
  for (const name of TEXT_COLUMNS) {
    const joinedColumn = wire.texts?.[name];
    if (joinedColumn === undefined) continue;
    const lengths = perJob(joinedColumn.lengths, Int32Array);
    if (lengths.reduce((total, length) => total + Math.max(0, length), 0) !== joinedColumn.bytes.length) disagree();
    texts[name] = { bytes: joinedColumn.bytes, lengths };
  }
  const columns: LoadableJobColumns = {
    count,
    ids: wire.ids,
    idLengths: perJob(wire.idLengths, Uint32Array),
    externalIds: wire.externalIds,
    externalIdLengths: perJob(wire.externalIdLengths, Uint32Array),
    strings: wire.strings,
    history: wholeNumbers(wire.history, 8),
    historyLengths: perJob(wire.historyLengths, Uint32Array),
    typed,
    texts,
  };
  if (Object.keys(legacyTexts).length > 0) columns.legacyTexts = legacyTexts;
  if (wire.extensions !== undefined) {
    if (wire.extensions.length !== count) disagree();
    columns.legacyExtensions = wire.extensions;
  }
  const sum = (lengths: Uint32Array): number => lengths.reduce((total, length) => total + length, 0);
  if (sum(columns.historyLengths) * 8 !== columns.history.byteLength || sum(columns.idLengths) !== columns.ids.length || sum(columns.externalIdLengths) !== columns.externalIds.length) disagree();
  return columns;
}

