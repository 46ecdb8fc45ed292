import { afterAll, describe, expect, test } from 'bun:test';
import { appendFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecoveryRefusedError, openDurableStore } from '../../persistence/durable-store.ts';
import type { RecoveryReport } from '../../persistence/durable-store.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { segmentFileName } from '../../persistence/file-names.ts';
import { LOG_MAGIC, encodeFrame, readFrame } from '../../persistence/frame.ts';
import { encodeValue } from '../../persistence/record-codec.ts';
import { RecordingStorage } from '../../persistence/recording-storage.ts';
import { recoverDataDir } from '../../persistence/recovery.ts';

// Crash tests (real files damaged as a crash or a bad disk leaves them): build a data
// directory with the real store, damage its
// files the way a crash or a bad disk would, recover, and check the state and the lines.
// Records are { n } with n = seq; the engine state is the list of every n, and a
// snapshot chunk holds a slice of that list.

const tempDirs: string[] = [];
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-recovery-'));
  tempDirs.push(dir);
  return dir;
}

interface History {
  recordsBefore: number;
  snapshot?: boolean;
  recordsAfter?: number;
  /** Simulates a crash between the snapshot rename and the removal of covered files. */
  keepCoveredFiles?: boolean;
  segmentBytesMax?: number;
}

async function writeHistory(dir: string, history: History): Promise<void> {
  const storage = new RecordingStorage(new FileStorage());
  if (history.keepCoveredFiles) {
    storage.beforeOperation = (operation) => {
      if (operation.name === 'remove') throw new Error('simulated crash before removal');
    };
  }
  const store = await openDurableStore({ dir, storage, fsync: 'always', segmentBytesMax: history.segmentBytesMax, log: () => {} });
  await store.recover({ snapshotChunk: () => {}, record: () => {} });
  const state: number[] = [];
  const appendRecords = async (count: number) => {
    for (let index = 0; index < count; index++) {
      state.push(state.length + 1);
      await store.append({ n: state.length });
    }
  };
  await appendRecords(history.recordsBefore);
  if (history.snapshot) await store.writeSnapshot({ chunks: chunksOf(state) });
  await appendRecords(history.recordsAfter ?? 0);
  await store.close();
}

function* chunksOf(state: readonly number[]): Generator<number[]> {
  for (let start = 0; start < state.length; start += 3) yield state.slice(start, start + 3);
}

interface Recovered {
  state: number[];
  logBytesSinceSnapshot: number;
  replayedSeqs: number[];
  report: RecoveryReport;
  lines: string[];
}

async function recover(dir: string): Promise<Recovered> {
  const lines: string[] = [];
  const store = await openDurableStore({ dir, storage: new FileStorage(), fsync: 'always', log: (line) => lines.push(line) });
  const state: number[] = [];
  const replayedSeqs: number[] = [];
  try {
    const report = await store.recover({
      snapshotChunk: (chunk) => state.push(...(chunk as number[])),
      record: (record, seq) => {
        state.push((record as { n: number }).n);
        replayedSeqs.push(seq);
      },
    });
    return { state, replayedSeqs, report, lines, logBytesSinceSnapshot: store.logBytesSinceSnapshot };
  } finally {
    await store.close();
  }
}

async function refusal(dir: string): Promise<RecoveryRefusedError> {
  const error = await recover(dir).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RecoveryRefusedError);
  return error as RecoveryRefusedError;
}

const upTo = (last: number): number[] => Array.from({ length: last }, (_, index) => index + 1);
const filesOf = (dir: string, prefix: string): string[] =>
  readdirSync(dir).filter((name) => name.startsWith(prefix)).sort().map((name) => join(dir, name));
const newestSegment = (dir: string): string => filesOf(dir, 'log-').at(-1)!;
const snapshotFile = (dir: string): string => filesOf(dir, 'snapshot-')[0]!;
const sizeOf = (path: string): number => statSync(path).size;

function frameOffsets(path: string): number[] {
  const bytes = readFileSync(path);
  const offsets: number[] = [];
  for (let offset = 0; offset < bytes.length; ) {
    const outcome = readFrame(bytes, offset, LOG_MAGIC);
    if (outcome.kind !== 'ok') break;
    offsets.push(offset);
    offset = outcome.nextOffset;
  }
  return offsets;
}

function flipByte(path: string, offset: number): void {
  const bytes = readFileSync(path);
  bytes[offset]! ^= 0xff;
  writeFileSync(path, bytes);
}

function chop(path: string, bytes: number): void {
  truncateSync(path, sizeOf(path) - bytes);
}

describe('recovery decision table: one test per cell', () => {
  test('snapshot ok x log clean: loads the snapshot and replays only the records after it', async () => {
    const dir = freshDir();
    await writeHistory(dir, { recordsBefore: 5, snapshot: true, recordsAfter: 3 });

    const recovered = await recover(dir);

    expect(recovered.state).toEqual(upTo(8));
    expect(recovered.replayedSeqs).toEqual([6, 7, 8]);
    expect(recovered.report).toMatchObject({ snapshotSeq: 5, recordsReplayed: 3, truncatedBytes: 0 });
    const replayedFrameBytes = [6, 7, 8].reduce((sum, n) => sum + encodeFrame(LOG_MAGIC, n, encodeValue({ n })).length, 0);
    expect(recovered.logBytesSinceSnapshot).toBe(replayedFrameBytes);
  });

  test('snapshot ok x log torn: cuts the tail back, logs file, offset and bytes, and replays the rest', async () => {
    const dir = freshDir();
    await writeHistory(dir, { recordsBefore: 5, snapshot: true, recordsAfter: 3 });
    const segment = newestSegment(dir);
    const lastFrameOffset = frameOffsets(segment).at(-1)!;
    const droppedBytes = sizeOf(segment) - 4 - lastFrameOffset;
    chop(segment, 4);

    const recovered = await recover(dir);

    expect(recovered.state).toEqual(upTo(7));
    expect(recovered.report.truncatedBytes).toBe(droppedBytes);
    expect(sizeOf(segment)).toBe(lastFrameOffset);
    expect(recovered.lines).toContainEqual(
      expect.stringContaining(`cut the torn tail of ${segment} at offset ${lastFrameOffset}: dropped ${droppedBytes} bytes (short read`),
    );
  });

  test('snapshot ok x log corrupt: refuses, names the file and the way out, changes nothing', async () => {
    const dir = freshDir();
    await writeHistory(dir, { recordsBefore: 5, snapshot: true, recordsAfter: 4 });
    const segment = newestSegment(dir);
    const secondFrame = frameOffsets(segment)[1]!;
    flipByte(segment, secondFrame + 25);
    const sizeBefore = sizeOf(segment);

    const error = await refusal(dir);

    expect(error.message).toContain(`log segment ${segment} is damaged: checksum mismatch at offset ${secondFrame}`);
    expect(error.message).toContain('intact records follow the damage');
    expect(error.message).toContain(`truncate -s ${secondFrame} ${segment}`);
    expect(error.message).toContain('Nothing in the directory was changed');
    expect(sizeOf(segment)).toBe(sizeBefore);
  });

  test('snapshot missing x log clean: replays the whole log from seq 1', async () => {
    const dir = freshDir();
    await writeHistory(dir, { recordsBefore: 6 });

    const recovered = await recover(dir);

    expect(recovered.state).toEqual(upTo(6));
    expect(recovered.report).toMatchObject({ snapshotSeq: 0, recordsReplayed: 6, truncatedBytes: 0 });
  });

  test('snapshot missing x log torn: cuts a half-written record and replays from seq 1', async () => {
    const dir = freshDir();
    await writeHistory(dir, { recordsBefore: 6 });
    const segment = newestSegment(dir);
    const sizeBefore = sizeOf(segment);
    const halfFrame = encodeFrame(LOG_MAGIC, 7, encodeValue({ n: 7 })).subarray(0, 15);
    appendFileSync(segment, halfFrame);

    const recovered = await recover(dir);

    expect(recovered.state).toEqual(upTo(6));
    expect(recovered.report.truncatedBytes).toBe(15);
    expect(sizeOf(segment)).toBe(sizeBefore);
    expect(recovered.lines).toContainEqual(expect.stringContaining(`${segment} at offset ${sizeBefore}: dropped 15 bytes`));
  });

  test('snapshot missing x log corrupt: a log that does not start at seq 1 is refused', async () => {
    const dir = freshDir();
    await writeHistory(dir, { recordsBefore: 5, snapshot: true, recordsAfter: 3 });
    unlinkSync(snapshotFile(dir));

    const error = await refusal(dir);

    expect(error.message).toContain(`records 1..5 are missing: the oldest log segment ${join(dir, segmentFileName(6))} starts at seq 6`);
    expect(error.message).toContain('restore the missing segment or snapshot from a backup');
  });

  test('snapshot corrupt x log clean: falls back to a full replay when the log still starts at seq 1', async () => {
    const dir = freshDir();
    await writeHistory(dir, { recordsBefore: 5, snapshot: true, recordsAfter: 3, keepCoveredFiles: true });
    const snapshot = snapshotFile(dir);
    flipByte(snapshot, 30);

    const recovered = await recover(dir);

    expect(recovered.state).toEqual(upTo(8));
    expect(recovered.report).toMatchObject({ snapshotSeq: 0, recordsReplayed: 8 });
    expect(recovered.lines).toContainEqual(expect.stringContaining(`snapshot ${snapshot} is corrupt (checksum mismatch at offset 0)`));
    expect(recovered.lines).toContainEqual(expect.stringContaining('falling back to an empty state and the log after it, which reaches seq 8'));
  });

  test('snapshot corrupt x log torn: falls back and cuts the torn tail', async () => {
    const dir = freshDir();
    await writeHistory(dir, { recordsBefore: 5, snapshot: true, recordsAfter: 3, keepCoveredFiles: true });
    flipByte(snapshotFile(dir), 30);
    chop(newestSegment(dir), 1);

    const recovered = await recover(dir);

    expect(recovered.state).toEqual(upTo(7));
    expect(recovered.report.snapshotSeq).toBe(0);
    expect(recovered.report.truncatedBytes).toBeGreaterThan(0);
  });

  test('snapshot corrupt x log corrupt: refuses when nothing can replace the snapshot', async () => {
    const dir = freshDir();
    await writeHistory(dir, { recordsBefore: 5, snapshot: true, recordsAfter: 3 });
    const snapshot = snapshotFile(dir);
    chop(snapshot, 1);

    const error = await refusal(dir);

    expect(error.message).toContain(`snapshot ${snapshot} is corrupt (short read`);
    expect(error.message).toContain('records 1..5 are missing');
    expect(error.message).toContain(`restore ${snapshot} from a backup, or move the whole data directory aside`);
  });
});

describe('recovery: damage and leftovers outside the table cells', () => {
  test('given a torn tail in an older segment, recovery refuses: only the newest segment may be torn', async () => {
    const dir = freshDir();
    await writeHistory(dir, { recordsBefore: 12, segmentBytesMax: 100 });
    const [oldest] = filesOf(dir, 'log-');
    chop(oldest!, 2);

    const error = await refusal(dir);

    expect(error.message).toContain(`log segment ${oldest} is damaged: short read`);
    expect(error.message).toContain('it is not the newest segment');
  });

  test('given bad magic followed by intact records, recovery refuses', async () => {
    const dir = freshDir();
    await writeHistory(dir, { recordsBefore: 4 });
    const segment = newestSegment(dir);
    const secondFrame = frameOffsets(segment)[1]!;
    flipByte(segment, secondFrame);

    const error = await refusal(dir);

    expect(error.message).toContain(`${segment} is damaged: bad magic`);
    expect(error.message).toContain(`at offset ${secondFrame}; intact records follow the damage`);
  });

  test('given zeros at the end of the newest segment (size written before data), recovery cuts them as torn', async () => {
    const dir = freshDir();
    await writeHistory(dir, { recordsBefore: 4 });
    appendFileSync(newestSegment(dir), new Uint8Array(64));

    const recovered = await recover(dir);

    expect(recovered.state).toEqual(upTo(4));
    expect(recovered.report.truncatedBytes).toBe(64);
    expect(recovered.lines).toContainEqual(expect.stringContaining('(bad magic 0x00000000'));
  });

  test('given a segment whose records skip a seq, recovery refuses with a sequence gap', async () => {
    const dir = freshDir();
    const segment = join(dir, segmentFileName(1));
    const frames = [1, 2, 4].map((seq) => encodeFrame(LOG_MAGIC, seq, encodeValue({ n: seq })));
    writeFileSync(segment, Buffer.concat(frames));

    const error = await refusal(dir);

    expect(error.message).toContain(`${segment} is damaged: sequence gap at offset ${frames[0]!.length + frames[1]!.length} (expected seq 3, found 4)`);
  });

  test('given a missing segment between the snapshot and the newest segment, recovery refuses naming the gap', async () => {
    const dir = freshDir();
    await writeHistory(dir, { recordsBefore: 2, snapshot: true, recordsAfter: 10, segmentBytesMax: 100 });
    const segments = filesOf(dir, 'log-');
    expect(segments.length).toBeGreaterThanOrEqual(3);
    const [, removed, following] = segments;
    unlinkSync(removed!);
    const removedFirstSeq = Number(/log-(\d+)/.exec(removed!)![1]);
    const followingFirstSeq = Number(/log-(\d+)/.exec(following!)![1]);

    const error = await refusal(dir);

    expect(error.message).toContain(`records ${removedFirstSeq}..${followingFirstSeq - 1} are missing: the log jumps to ${following}`);
    expect(error.message).toContain('restore the missing segment from a backup');
  });

  test('given a corrupt newest snapshot and an intact older one with its log, recovery falls back to the older one', async () => {
    const dir = freshDir();
    const storage = new RecordingStorage(new FileStorage());
    storage.beforeOperation = (operation) => {
      if (operation.name === 'remove') throw new Error('simulated crash before removal');
    };
    const store = await openDurableStore({ dir, storage, fsync: 'always', log: () => {} });
    await store.recover({ snapshotChunk: () => {}, record: () => {} });
    for (let n = 1; n <= 6; n++) {
      await store.append({ n });
      if (n === 2 || n === 4) await store.writeSnapshot({ chunks: chunksOf(upTo(n)) });
    }
    await store.close();
    const [older, newest] = filesOf(dir, 'snapshot-');
    flipByte(newest!, 40);

    const recovered = await recover(dir);

    expect(recovered.state).toEqual(upTo(6));
    expect(recovered.report.snapshotSeq).toBe(2);
    expect(recovered.lines).toContainEqual(expect.stringContaining(`falling back to snapshot ${older}`));
  });

  test('given an unfinished snapshot temp file, recovery removes it and says so', async () => {
    const dir = freshDir();
    await writeHistory(dir, { recordsBefore: 3 });
    const temp = join(dir, 'snapshot-00000000000000000003.tmp');
    writeFileSync(temp, new Uint8Array(10));

    const recovered = await recover(dir);

    expect(recovered.state).toEqual(upTo(3));
    expect(readdirSync(dir)).not.toContain('snapshot-00000000000000000003.tmp');
    expect(recovered.lines).toContainEqual(`removed ${temp}: a snapshot write that never finished`);
  });

  test('given an empty directory, recovery starts empty and says so', async () => {
    const dir = freshDir();
    const recovered = await recover(dir);
    expect(recovered.state).toEqual([]);
    expect(recovered.lines[0]).toBe(`data directory ${dir} holds no snapshot and no log: starting empty`);
  });

  test('given a long replay, recovery reports progress lines with the share of the log read and the rate', async () => {
    const dir = freshDir();
    await writeHistory(dir, { recordsBefore: 5 });
    const lines: string[] = [];
    const fields: Array<Record<string, unknown> | undefined> = [];

    await recoverDataDir({
      dir, storage: new FileStorage(), handler: { snapshotChunk: () => {}, record: () => {} },
      log: (line, extra) => { lines.push(line); fields.push(extra); }, progressEveryRecords: 2, progressEveryMs: 60_000,
    });

    const progress = lines.filter((line) => line.startsWith('replayed '));
    expect(progress).toHaveLength(2);
    // five records of the same size: after four, 80% of the log is read
    expect(progress[1]).toMatch(/^replayed 4 log records \(through seq 4, 80% of \d+ log bytes\) in \d+ ms, \d+ records\/s$/);
    expect(fields[lines.indexOf(progress[1]!)]).toMatchObject({ records: 4, seq: 4, percent: 80 });
  });

  test('given a replay longer than the progress interval, a line comes every interval, not only every N records', async () => {
    const dir = freshDir();
    // several segments, so the share read counts the segments before the current one
    const store = await openDurableStore({ dir, storage: new FileStorage(), fsync: 'no', segmentBytesMax: 2_000, log: () => {} });
    await store.recover({ snapshotChunk: () => {}, record: () => {} });
    for (let first = 1; first <= 600; first += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, index) => store.append({ n: first + index })));
    }
    await store.close();
    const progressLines = async (progressEveryMs: number) => {
      const lines: string[] = [];
      await recoverDataDir({
        dir, storage: new FileStorage(), handler: { snapshotChunk: () => {}, record: () => {} },
        log: (line) => lines.push(line), progressEveryRecords: 1_000_000, progressEveryMs,
      });
      return lines.filter((line) => line.startsWith('replayed '));
    };

    const everyTime = await progressLines(0);
    const never = await progressLines(60_000);

    // the clock is read every 256 records
    expect(everyTime.map((line) => line.match(/^replayed (\d+) log records/)?.[1])).toEqual(['256', '512']);
    const percents = everyTime.map((line) => Number(line.match(/(\d+)% of/)?.[1]));
    expect(percents[0]).toBeGreaterThan(30);
    expect(percents[1]).toBeGreaterThan(percents[0]!);
    expect(percents[1]).toBeLessThan(100);
    expect(never).toEqual([]);
  });

  test('given a cut torn tail, appends continue after the cut and the next recovery is clean', async () => {
    const dir = freshDir();
    await writeHistory(dir, { recordsBefore: 3 });
    chop(newestSegment(dir), 3);
    const store = await openDurableStore({ dir, storage: new FileStorage(), fsync: 'always', log: () => {} });
    await store.recover({ snapshotChunk: () => {}, record: () => {} });
    expect(await store.append({ n: 3 })).toBe(3);
    await store.close();

    const recovered = await recover(dir);

    expect(recovered.state).toEqual(upTo(3));
    expect(recovered.report.truncatedBytes).toBe(0);
  });
});
