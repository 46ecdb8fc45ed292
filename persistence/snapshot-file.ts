import { join } from 'node:path';
import { DurabilityError, describeError } from './errors.ts';
import { snapshotFileName, snapshotTempFileName } from './file-names.ts';
import { SNAPSHOT_MAGIC, describeFrameDamage, encodeFrame, readFrame } from './frame.ts';
import { decodeValue, encodeValue } from './record-codec.ts';
import type { Storage, StorageFile } from './storage.ts';

/**
 * A snapshot file is a run of SNAPSHOT_MAGIC frames numbered from 0:
 *
 *   frame 0        header  { format, version, seq }
 *   frames 1..n    one msgpack-encoded chunk each, as the engine yielded them
 *   frame n + 1    trailer { trailer: true, chunkCount: n, seq }
 *
 * Every frame has its own checksum; the trailer proves the file was not cut at a chunk
 * boundary. The file is written as snapshot-<seq>.tmp, synced, renamed, and its
 * directory synced (a rename is durable only once its directory is), so a snapshot name always
 * means a complete file.
 */
export interface SnapshotSource {
  chunks: Iterator<unknown>;
}

const SNAPSHOT_FORMAT = 'jobwatch-snapshot';
const SNAPSHOT_VERSION = 1;

interface SnapshotHeader {
  format: string;
  version: number;
  seq: number;
}

interface SnapshotTrailer {
  trailer: true;
  chunkCount: number;
  seq: number;
}

export async function writeSnapshotFile(
  storage: Storage,
  dir: string,
  seq: number,
  source: SnapshotSource,
): Promise<{ path: string; bytes: number }> {
  const tempPath = join(dir, snapshotTempFileName(seq));
  const finalPath = join(dir, snapshotFileName(seq));
  let file: StorageFile | undefined;
  let completed = false;
  try {
    // A temp file with this name is left from an attempt that failed; start it over.
    if (await storage.exists(tempPath)) await storage.remove(tempPath);
    file = await storage.openAppend(tempPath);
    const header: SnapshotHeader = { format: SNAPSHOT_FORMAT, version: SNAPSHOT_VERSION, seq };
    let bytes = await appendFrame(file, 0, header);
    let chunkCount = 0;
    for (let next = source.chunks.next(); !next.done; next = source.chunks.next()) {
      chunkCount += 1;
      bytes += await appendFrame(file, chunkCount, next.value);
      // Give request handling a turn between chunks: a large snapshot takes seconds.
      await yieldToEventLoop();
    }
    // Stryker disable next-line BooleanLiteral: return() on a generator that already finished
    // does nothing
    completed = true;
    const trailer: SnapshotTrailer = { trailer: true, chunkCount, seq };
    bytes += await appendFrame(file, chunkCount + 1, trailer);
    await file.datasync();
    await file.close();
    file = undefined;
    await storage.rename(tempPath, finalPath);
    await storage.fsyncDir(dir);
    return { path: finalPath, bytes };
  } catch (error) {
    if (!completed) source.chunks.return?.();
    await file?.close().catch(() => undefined);
    await storage.remove(tempPath).catch(() => undefined);
    throw new DurabilityError(`snapshot ${finalPath} was not written: ${describeError(error)}`, { cause: error });
  }
}

export type SnapshotReadResult =
  /** `chunkOffsets[i]`: where chunk i's frame starts in the file, for messages about it */
  | { kind: 'ok'; seq: number; chunkPayloads: Uint8Array[]; chunkOffsets: number[] }
  | { kind: 'corrupt'; reason: string };

/**
 * Reads and fully verifies a snapshot before anything is handed to the engine, so a
 * damaged file is never half-loaded. Chunk payloads stay encoded until they are used.
 */
export async function readSnapshotFile(storage: Storage, path: string, seq: number): Promise<SnapshotReadResult> {
  const bytes = await storage.readFinishedFile(path);
  const payloads: Uint8Array[] = [];
  const offsets: number[] = [];
  for (let offset = 0; offset < bytes.length; ) {
    const outcome = readFrame(bytes, offset, SNAPSHOT_MAGIC, payloads.length);
    if (outcome.kind !== 'ok') return { kind: 'corrupt', reason: describeFrameDamage(outcome) };
    payloads.push(outcome.payload);
    offsets.push(offset);
    offset = outcome.nextOffset;
  }
  const [headerPayload] = payloads;
  const trailerPayload = payloads.at(-1);
  if (payloads.length < 2 || !headerPayload || !trailerPayload) {
    return { kind: 'corrupt', reason: `only ${payloads.length} intact frames, a header and a trailer are required` };
  }
  const header = decodeOrUndefined(headerPayload) as Partial<SnapshotHeader> | undefined;
  if (header?.format !== SNAPSHOT_FORMAT || header.version !== SNAPSHOT_VERSION || header.seq !== seq) {
    return { kind: 'corrupt', reason: `header does not describe a version ${SNAPSHOT_VERSION} snapshot of seq ${seq}` };
  }
  const chunkPayloads = payloads.slice(1, -1);
  if (!isTrailerFor(decodeOrUndefined(trailerPayload), seq, chunkPayloads.length)) {
    return { kind: 'corrupt', reason: 'the trailer is missing: the file ends early' };
  }
  return { kind: 'ok', seq, chunkPayloads, chunkOffsets: offsets.slice(1, -1) };
}

/** An intact checksum over bytes msgpack cannot read means a format bug, but still: not loadable. */
function decodeOrUndefined(payload: Uint8Array): unknown {
  try {
    return decodeValue(payload);
    // Stryker disable next-line BlockStatement: an empty catch returns undefined too
  } catch {
    return undefined;
  }
}

function isTrailerFor(value: unknown, seq: number, chunkCount: number): boolean {
  // Stryker disable next-line ConditionalExpression: reading `trailer` of a number or string
  // gives undefined, refused below anyway
  if (typeof value !== 'object' || value === null) return false;
  const trailer = value as Partial<SnapshotTrailer>;
  return trailer.trailer === true && trailer.chunkCount === chunkCount && trailer.seq === seq;
}

async function appendFrame(file: StorageFile, frameIndex: number, value: unknown): Promise<number> {
  const frame = encodeFrame(SNAPSHOT_MAGIC, frameIndex, encodeValue(value));
  await file.append(frame);
  return frame.length;
}

// Stryker disable next-line BlockStatement: not yielding stalls requests during a snapshot;
// the benchmark (load/) measures that, a unit test cannot
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Reads and fully verifies a snapshot file whose seq is not known from its name (a
 * backup a user may have renamed): the seq comes from the header frame.
 */
export async function readSnapshotFileAnyName(storage: Storage, path: string): Promise<SnapshotReadResult> {
  const bytes = await storage.readFile(path);
  const first = readFrame(bytes, 0, SNAPSHOT_MAGIC, 0);
  if (first.kind !== 'ok') return { kind: 'corrupt', reason: describeFrameDamage(first) };
  const header = decodeOrUndefined(first.payload) as Partial<SnapshotHeader> | undefined;
  if (typeof header?.seq !== 'number') return { kind: 'corrupt', reason: 'the header frame names no seq' };
  return readSnapshotFile(storage, path, header.seq);
}
