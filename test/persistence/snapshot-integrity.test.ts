/**
 * What makes a snapshot file loadable (persistence/snapshot-file.ts): every frame's
 * checksum, a header naming the format, version and seq, and a trailer counting the
 * chunks. A file that fails any of them must be refused as a whole, never half-loaded:
 * each test below damages one of them in a file the real writer made and checks that
 * the read says corrupt and why. Skipping any one check turns exactly one of them green.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStorage } from '../../persistence/file-storage.ts';
import { snapshotFileName } from '../../persistence/file-names.ts';
import { FRAME_HEADER_BYTES, SNAPSHOT_MAGIC, encodeFrame, readFrame } from '../../persistence/frame.ts';
import { decodeValue, encodeValue } from '../../persistence/record-codec.ts';
import { DurabilityError } from '../../persistence/errors.ts';
import { RecordingStorage } from '../../persistence/recording-storage.ts';
import { readSnapshotFile, writeSnapshotFile } from '../../persistence/snapshot-file.ts';
import { snapshotTempFileName } from '../../persistence/file-names.ts';

const storage = new FileStorage();
const tempDirs: string[] = [];
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const SEQ = 7;
const CHUNKS = [[1, 2], [3, 4], [5]];

/** A snapshot of CHUNKS at SEQ, written by the real writer; returns its path. */
async function writtenSnapshot(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-snapshot-integrity-'));
  tempDirs.push(dir);
  const { path } = await writeSnapshotFile(storage, dir, SEQ, { chunks: CHUNKS[Symbol.iterator]() });
  expect(path).toBe(join(dir, snapshotFileName(SEQ)));
  return path;
}

/** Byte ranges of the file's frames, in order. */
function frames(bytes: Uint8Array): Array<{ start: number; end: number }> {
  const found: Array<{ start: number; end: number }> = [];
  for (let offset = 0; offset < bytes.length; ) {
    const outcome = readFrame(bytes, offset, SNAPSHOT_MAGIC);
    if (outcome.kind !== 'ok') throw new Error(`fixture is not a clean snapshot at ${offset}: ${outcome.kind}`);
    found.push({ start: offset, end: outcome.nextOffset });
    offset = outcome.nextOffset;
  }
  return found;
}

/** Replaces frame `index` by one with the same number holding `value` (a valid checksum over a wrong content). */
function replaceFrame(path: string, index: number, value: unknown): void {
  const bytes = readFileSync(path);
  const frame = frames(bytes)[index]!;
  const replacement = encodeFrame(SNAPSHOT_MAGIC, index, encodeValue(value));
  writeFileSync(path, Buffer.concat([bytes.subarray(0, frame.start), replacement, bytes.subarray(frame.end)]));
}

function payloadOf(path: string, index: number): unknown {
  const bytes = readFileSync(path);
  const frame = frames(bytes)[index]!;
  return decodeValue(bytes.subarray(frame.start + FRAME_HEADER_BYTES, frame.end));
}

async function expectCorrupt(path: string, reason: string | RegExp): Promise<void> {
  const read = await readSnapshotFile(storage, path, SEQ);
  expect(read.kind).toBe('corrupt');
  if (read.kind === 'corrupt') expect(read.reason).toMatch(reason);
}

describe('snapshot file integrity', () => {
  test('given an intact file, then it reads as its header seq and exactly the chunks written, in order', async () => {
    const path = await writtenSnapshot();
    const read = await readSnapshotFile(storage, path, SEQ);
    expect(read.kind).toBe('ok');
    if (read.kind !== 'ok') return;
    expect(read.seq).toBe(SEQ);
    expect(read.chunkPayloads.map((payload) => decodeValue(payload))).toEqual(CHUNKS);
    expect(payloadOf(path, 0)).toEqual({ format: 'jobwatch-snapshot', version: 1, seq: SEQ });
    expect(payloadOf(path, CHUNKS.length + 1)).toEqual({ trailer: true, chunkCount: CHUNKS.length, seq: SEQ });
  });

  test('given one flipped byte inside a middle chunk, then the checksum refuses the file', async () => {
    const path = await writtenSnapshot();
    const bytes = readFileSync(path);
    const middle = frames(bytes)[2]!;
    bytes[middle.end - 1]! ^= 0x01;
    writeFileSync(path, bytes);
    await expectCorrupt(path, `checksum mismatch at offset ${middle.start}`);
  });

  test('given a file cut exactly after a chunk (the trailer lost), then it is refused: the file ends early', async () => {
    const path = await writtenSnapshot();
    const bytes = readFileSync(path);
    const lastChunk = frames(bytes)[CHUNKS.length]!;
    writeFileSync(path, bytes.subarray(0, lastChunk.end));
    await expectCorrupt(path, 'the trailer is missing: the file ends early');
  });

  test('given a file cut after its first chunk, then it is refused too (the last frame is a chunk, not a trailer)', async () => {
    const path = await writtenSnapshot();
    const bytes = readFileSync(path);
    writeFileSync(path, bytes.subarray(0, frames(bytes)[1]!.end));
    await expectCorrupt(path, 'the trailer is missing');
  });

  test('given a trailer that counts another number of chunks, then it is refused', async () => {
    const path = await writtenSnapshot();
    replaceFrame(path, CHUNKS.length + 1, { trailer: true, chunkCount: CHUNKS.length + 1, seq: SEQ });
    await expectCorrupt(path, 'the trailer is missing');
  });

  test('given a trailer of another seq, then it is refused', async () => {
    const path = await writtenSnapshot();
    replaceFrame(path, CHUNKS.length + 1, { trailer: true, chunkCount: CHUNKS.length, seq: SEQ + 1 });
    await expectCorrupt(path, 'the trailer is missing');
  });

  test('given a last frame that is not marked as a trailer, then it is refused', async () => {
    const path = await writtenSnapshot();
    replaceFrame(path, CHUNKS.length + 1, { trailer: false, chunkCount: CHUNKS.length, seq: SEQ });
    await expectCorrupt(path, 'the trailer is missing');
    replaceFrame(path, CHUNKS.length + 1, null);
    await expectCorrupt(path, 'the trailer is missing');
  });

  test('given a header of another format, version or seq, then it is refused', async () => {
    for (const header of [
      { format: 'other-snapshot', version: 1, seq: SEQ },
      { format: 'jobwatch-snapshot', version: 2, seq: SEQ },
      { format: 'jobwatch-snapshot', version: 1, seq: SEQ - 1 },
      'not an object',
    ]) {
      const path = await writtenSnapshot();
      replaceFrame(path, 0, header);
      await expectCorrupt(path, `header does not describe a version 1 snapshot of seq ${SEQ}`);
    }
  });

  test('given a header whose checksum is intact but whose bytes msgpack cannot read, then it is refused, not thrown', async () => {
    const path = await writtenSnapshot();
    const bytes = readFileSync(path);
    const header = frames(bytes)[0]!;
    const unreadable = encodeFrame(SNAPSHOT_MAGIC, 0, new Uint8Array([0x92])); // an array of two, cut off: msgpack throws
    writeFileSync(path, Buffer.concat([unreadable, bytes.subarray(header.end)]));
    await expectCorrupt(path, 'header does not describe');
  });

  test('given a file asked for under another seq than its header says (a renamed file), then it is refused', async () => {
    const path = await writtenSnapshot();
    const read = await readSnapshotFile(storage, path, SEQ + 1);
    expect(read.kind).toBe('corrupt');
  });

  test('given only a header, or an empty file, then it is refused naming the frames it has', async () => {
    const path = await writtenSnapshot();
    const bytes = readFileSync(path);
    writeFileSync(path, bytes.subarray(0, frames(bytes)[0]!.end));
    await expectCorrupt(path, 'only 1 intact frames, a header and a trailer are required');
    writeFileSync(path, new Uint8Array(0));
    await expectCorrupt(path, 'only 0 intact frames');
  });

  test('given chunk frames swapped (each still intact), then the frame numbers refuse the file', async () => {
    const path = await writtenSnapshot();
    const bytes = readFileSync(path);
    const [header, first, second, ...rest] = frames(bytes);
    const slice = (frame: { start: number; end: number }) => bytes.subarray(frame.start, frame.end);
    writeFileSync(path, Buffer.concat([slice(header!), slice(second!), slice(first!), ...rest.map(slice)]));
    await expectCorrupt(path, 'sequence gap');
  });

  test('given a snapshot with no chunks, then header and trailer alone are a valid empty snapshot', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jobwatch-snapshot-integrity-'));
    tempDirs.push(dir);
    const { path } = await writeSnapshotFile(storage, dir, SEQ, { chunks: [][Symbol.iterator]() });
    const read = await readSnapshotFile(storage, path, SEQ);
    expect(read).toEqual({ kind: 'ok', seq: SEQ, chunkPayloads: [], chunkOffsets: [] });
  });
});

describe('snapshot file writing', () => {
  const freshDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'jobwatch-snapshot-write-'));
    tempDirs.push(dir);
    return dir;
  };

  test('the reported size is the size of the file', async () => {
    const dir = freshDir();
    const written = await writeSnapshotFile(storage, dir, SEQ, { chunks: CHUNKS[Symbol.iterator]() });
    expect(written.bytes).toBe(readFileSync(written.path).length);
  });

  test('a temp file left by an attempt that failed is started over, not appended to', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, snapshotTempFileName(SEQ)), 'half a snapshot from a crash');
    const { path } = await writeSnapshotFile(storage, dir, SEQ, { chunks: CHUNKS[Symbol.iterator]() });
    const read = await readSnapshotFile(storage, path, SEQ);
    expect(read.kind).toBe('ok');
  });

  test('a write that fails midway closes the source (the engine releases its copy-on-write) and says why, with the cause', async () => {
    const dir = freshDir();
    const failing = new RecordingStorage(storage);
    let appends = 0;
    failing.beforeOperation = (operation) => {
      if (operation.name === 'append' && ++appends === 3) throw new Error('ENOSPC: simulated full disk');
    };
    let closed = false;
    function* chunks(): Generator<number[]> {
      try {
        for (const chunk of CHUNKS) yield chunk;
      } finally {
        closed = true;
      }
    }
    const error = await writeSnapshotFile(failing, dir, SEQ, { chunks: chunks() }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DurabilityError);
    expect((error as Error).message).toContain('was not written: ENOSPC');
    expect(((error as Error).cause as Error).message).toBe('ENOSPC: simulated full disk');
    expect(closed).toBe(true);
  });

  test('a write that cannot even open its file fails as a DurabilityError, also for a source without return()', async () => {
    const dir = freshDir();
    const failing = new RecordingStorage(storage);
    failing.beforeOperation = (operation) => {
      if (operation.name === 'openAppend') throw new Error('EACCES: simulated');
    };
    const arrayIterator = CHUNKS[Symbol.iterator]();
    expect((arrayIterator as { return?: unknown }).return).toBeUndefined();
    const error = await writeSnapshotFile(failing, dir, SEQ, { chunks: arrayIterator }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DurabilityError);
    expect((error as Error).message).toContain('EACCES');
  });
});
