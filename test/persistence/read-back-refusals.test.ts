/**
 * Content that passes its checksum but cannot be read back: a snapshot chunk or log record
 * msgpack cannot decode, or one the handler refuses (the engine checks its shape). Each
 * stops the start with the file, the frame's offset and what was wrong, and changes nothing
 * on disk: the torn tail stays uncut and the unfinished snapshot in place, so the operator
 * can still copy the directory as it was. A dry run (`verify`) changes nothing either.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDurableStore, RecoveryRefusedError, type RecoveryHandler } from '../../persistence/durable-store.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { segmentFileName, snapshotFileName, snapshotTempFileName } from '../../persistence/file-names.ts';
import { LOG_MAGIC, SNAPSHOT_MAGIC, encodeFrame, readFrame } from '../../persistence/frame.ts';
import { encodeValue } from '../../persistence/record-codec.ts';
import { recoverDataDir } from '../../persistence/recovery.ts';

const tempDirs: string[] = [];
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** Records { n } for seq 1..5, a snapshot of [[1, 2], [3]] at seq 3 (two chunks), records 4 and 5 after it. */
async function history(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-read-back-'));
  tempDirs.push(dir);
  const store = await openDurableStore({ dir, storage: new FileStorage(), fsync: 'always', log: () => {} });
  await store.recover({ snapshotChunk: () => {}, record: () => {} });
  for (let n = 1; n <= 3; n++) await store.append({ n });
  await store.writeSnapshot({ chunks: [[1, 2], [3]][Symbol.iterator]() });
  for (let n = 4; n <= 5; n++) await store.append({ n });
  await store.close();
  return dir;
}

/** Frame start offsets of a file of `magic` frames. */
function frameOffsets(path: string, magic: number): number[] {
  const bytes = readFileSync(path);
  const offsets: number[] = [];
  for (let offset = 0; offset < bytes.length; ) {
    const outcome = readFrame(bytes, offset, magic);
    if (outcome.kind !== 'ok') break;
    offsets.push(offset);
    offset = outcome.nextOffset;
  }
  return offsets;
}

/** Replaces frame `index` of `path` by one with the same number and a valid checksum over `payload`. */
function replaceFrame(path: string, magic: number, index: number, seq: number, payload: Uint8Array): number {
  const bytes = readFileSync(path);
  const offsets = [...frameOffsets(path, magic), bytes.length];
  const start = offsets[index]!;
  writeFileSync(path, Buffer.concat([bytes.subarray(0, start), encodeFrame(magic, seq, payload), bytes.subarray(offsets[index + 1]!)]));
  return start;
}

/** What a crash leaves beside the damage: a torn tail on the newest segment and an unfinished snapshot. */
function crashLeftovers(dir: string): { tornSegment: string; tornSize: number; temp: string } {
  const tornSegment = join(dir, segmentFileName(4));
  appendFileSync(tornSegment, encodeFrame(LOG_MAGIC, 6, encodeValue({ n: 6 })).subarray(0, 11));
  const temp = join(dir, snapshotTempFileName(9));
  writeFileSync(temp, 'half a snapshot');
  return { tornSegment, tornSize: statSync(tornSegment).size, temp };
}

const handlerKeeping = (state: unknown[]): RecoveryHandler => ({ snapshotChunk: (chunk) => state.push(chunk), record: (record) => state.push(record) });

async function refusalOf(dir: string, handler: RecoveryHandler = handlerKeeping([])): Promise<RecoveryRefusedError> {
  const error = await recoverDataDir({ dir, storage: new FileStorage(), handler, log: () => {} }).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(RecoveryRefusedError);
  return error as RecoveryRefusedError;
}

/** msgpack reads 1 and finds a byte left over: "Data read, but end of buffer not reached". */
const UNDECODABLE = Uint8Array.of(0x01, 0x02);

describe('content that passes its checksum but cannot be read back', () => {
  test('a snapshot chunk msgpack cannot decode stops the start naming the file, the chunk, its offset and the reason; nothing changes', async () => {
    const dir = await history();
    const snapshot = join(dir, snapshotFileName(3));
    const offset = replaceFrame(snapshot, SNAPSHOT_MAGIC, 2, 2, UNDECODABLE);
    const { tornSegment, tornSize, temp } = crashLeftovers(dir);
    const before = readdirSync(dir).sort();

    const error = await refusalOf(dir);
    expect(error.message).toStartWith(
      `refusing to start from data directory ${dir}: snapshot ${snapshot} chunk 2 of 2 (frame at offset ${offset}): it could not be read (Data read, but end of buffer not reached`,
    );
    expect(error.message).toContain(`To start: restore ${snapshot} from a backup; or move it out of the directory`);
    expect(error.message).toEndWith('Nothing in the directory was changed.');
    expect(readdirSync(dir).sort()).toEqual(before);
    expect(statSync(tornSegment).size).toBe(tornSize);
    expect(existsSync(temp)).toBe(true);
  });

  test('a chunk the handler refuses stops the start with the handler\'s words, where it was found', async () => {
    const dir = await history();
    const snapshot = join(dir, snapshotFileName(3));
    const offsets = frameOffsets(snapshot, SNAPSHOT_MAGIC);
    const refusing: RecoveryHandler = {
      snapshotChunk: (chunk) => {
        if (Array.isArray(chunk) && chunk.length === 1) throw Object.assign(new Error("expected a chunk of two, found one"), { name: 'ShapeError' });
      },
      record: () => {},
    };
    const error = await refusalOf(dir, refusing);
    expect(error.message).toStartWith(`refusing to start from data directory ${dir}: snapshot ${snapshot} chunk 2 of 2 (frame at offset ${offsets[2]}): expected a chunk of two, found one. To start:`);
  });

  test('the handler hears the end of the snapshot, and its refusal there names the snapshot', async () => {
    const dir = await history();
    const heard: string[] = [];
    const handler: RecoveryHandler = {
      snapshotChunk: () => heard.push('chunk'),
      snapshotEnded: () => {
        heard.push('end');
        throw Object.assign(new Error('expected an accounts chunk, found none'), { name: 'ShapeError' });
      },
      record: () => heard.push('record'),
    };
    const error = await refusalOf(dir, handler);
    expect(heard).toEqual(['chunk', 'chunk', 'end']);
    expect(error.message).toStartWith(`refusing to start from data directory ${dir}: snapshot ${join(dir, snapshotFileName(3))}: expected an accounts chunk, found none.`);
  });

  test('a log record msgpack cannot decode stops the start naming the segment, the seq, the offset, and where to cut to accept the loss', async () => {
    const dir = await history();
    const segment = join(dir, segmentFileName(4));
    const offset = replaceFrame(segment, LOG_MAGIC, 1, 5, UNDECODABLE);
    const error = await refusalOf(dir);
    expect(error.message).toBe(
      `refusing to start from data directory ${dir}: log segment ${segment} record seq 5 (frame at offset ${offset}): it could not be read (Data read, but end of buffer not reached 1). ` +
        `To start: restore ${segment} from a backup; or, to accept losing every record from seq 5 on, cut the file at the record (truncate -s ${offset} ${segment}). Nothing in the directory was changed.`,
    );
  });

  test('a record the handler refuses names it the same way, and the later segments to move', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jobwatch-read-back-'));
    tempDirs.push(dir);
    const store = await openDurableStore({ dir, storage: new FileStorage(), fsync: 'always', segmentBytesMax: 1, log: () => {} });
    await store.recover({ snapshotChunk: () => {}, record: () => {} });
    for (let n = 1; n <= 3; n++) await store.append({ n });
    await store.close();
    const refusing: RecoveryHandler = {
      snapshotChunk: () => {},
      record: (record) => {
        if ((record as { n: number }).n === 2) throw Object.assign(new Error("expected a record type this version knows, found 'two'"), { name: 'ShapeError' });
      },
    };
    const error = await refusalOf(dir, refusing);
    expect(error.message).toContain(`log segment ${join(dir, segmentFileName(2))} record seq 2 (frame at offset 0): expected a record type this version knows, found 'two'.`);
    expect(error.message).toContain(`(truncate -s 0 ${join(dir, segmentFileName(2))}) and move ${join(dir, segmentFileName(3))} out of the directory`);
  });

  test('after everything was read the torn tail is cut and the unfinished snapshot removed, as before', async () => {
    const dir = await history();
    const { tornSegment, tornSize, temp } = crashLeftovers(dir);
    const state: unknown[] = [];
    const { report } = await recoverDataDir({ dir, storage: new FileStorage(), handler: handlerKeeping(state), log: () => {} });
    expect(state).toEqual([[1, 2], [3], { n: 4 }, { n: 5 }]);
    expect(report.truncatedBytes).toBe(11);
    expect(statSync(tornSegment).size).toBe(tornSize - 11);
    expect(existsSync(temp)).toBe(false);
  });
});

describe('a dry run (the verify command)', () => {
  test('reads everything, changes nothing, and says what a start would do', async () => {
    const dir = await history();
    const { tornSegment, tornSize, temp } = crashLeftovers(dir);
    const before = readdirSync(dir).sort();
    const state: unknown[] = [];
    const lines: string[] = [];
    const { report } = await recoverDataDir({ dir, storage: new FileStorage(), handler: handlerKeeping(state), log: (line) => lines.push(line), dryRun: true });
    expect(state).toEqual([[1, 2], [3], { n: 4 }, { n: 5 }]);
    expect(report.truncatedBytes).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(before);
    expect(statSync(tornSegment).size).toBe(tornSize);
    expect(lines).toContain(`would remove ${temp}: a snapshot write that never finished`);
    expect(lines.some((line) => line.startsWith(`would cut the torn tail of ${tornSegment} at offset ${tornSize - 11}: dropped 11 bytes`))).toBe(true);
    expect(lines.some((line) => line.startsWith(`would recover from snapshot ${join(dir, snapshotFileName(3))} (seq 3) and 2 log records`))).toBe(true);
  });

  test('on a directory that does not exist it makes none', async () => {
    const dir = join(tmpdir(), `jobwatch-never-made-${process.pid}-${Date.now()}`);
    const lines: string[] = [];
    const error = await recoverDataDir({ dir, storage: new FileStorage(), handler: handlerKeeping([]), log: (line) => lines.push(line), dryRun: true }).catch((caught: unknown) => caught);
    expect(existsSync(dir)).toBe(false);
    expect(error).toBeInstanceOf(Error);
  });
});
