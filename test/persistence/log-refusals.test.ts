/**
 * The refusals an operator reads when the log cannot be trusted: each names the file,
 * the records at stake and the way out, word for word, because an operator acts on
 * them (which file to move, where to truncate). Segments are built frame by frame so
 * each test holds exactly the damage it names.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecoveryRefusedError } from '../../persistence/errors.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { segmentFileName } from '../../persistence/file-names.ts';
import { FRAME_HEADER_BYTES, LOG_MAGIC, encodeFrame } from '../../persistence/frame.ts';
import { encodeValue } from '../../persistence/record-codec.ts';
import { recoverDataDir } from '../../persistence/recovery.ts';
import { writeSnapshotFile } from '../../persistence/snapshot-file.ts';

const tempDirs: string[] = [];
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const frame = (seq: number) => encodeFrame(LOG_MAGIC, seq, encodeValue({ n: seq }));
const FRAME_BYTES = frame(1).length;

/** A directory with one segment per entry: [file's first seq, the seqs of its frames]. */
function directory(segments: Array<[number, number[]]>): { dir: string; path: (firstSeq: number) => string } {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-refusals-'));
  tempDirs.push(dir);
  for (const [firstSeq, seqs] of segments) writeFileSync(join(dir, segmentFileName(firstSeq)), Buffer.concat(seqs.map(frame)));
  return { dir, path: (firstSeq) => join(dir, segmentFileName(firstSeq)) };
}

async function refusal(dir: string): Promise<string> {
  const error = await recoverDataDir({ dir, storage: new FileStorage(), log: () => {}, handler: { snapshotChunk: () => {}, record: () => {} } }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RecoveryRefusedError);
  return (error as Error).message;
}

describe('log refusals, word for word', () => {
  test('overlapping segments: names the overlap and which files to move', async () => {
    const { dir, path } = directory([[1, [1, 2, 3]], [2, [2, 3]], [4, [4]]]);
    const message = await refusal(dir);
    expect(message).toContain(`log segment ${path(2)} starts at seq 2 but the segment before it already holds records up to seq 3`);
    expect(message).toContain(
      `find out which copy is right; to keep the records before it, move ${path(2)}, ${path(4)} out of the directory (records from seq 2 on will be lost)`,
    );
  });

  test('a gap between segments: names the missing records and the later files', async () => {
    const { dir, path } = directory([[1, [1, 2]], [5, [5]], [6, [6]]]);
    const message = await refusal(dir);
    expect(message).toContain(`records 3..4 are missing: the log jumps to ${path(5)}, which starts at seq 5`);
    expect(message).toContain(`restore the missing segment from a backup, or move ${path(5)}, ${path(6)} out of the directory to accept losing every record from seq 3 on`);
  });

  test('damage in an older segment: where to cut, what is lost, and the later segments to move', async () => {
    const { dir, path } = directory([[1, [1, 2]], [3, [3]], [4, [4]]]);
    const damaged = Buffer.concat([frame(1), frame(2)]);
    damaged[FRAME_BYTES + FRAME_HEADER_BYTES]! ^= 0xff; // record 2's payload
    writeFileSync(path(1), damaged);
    const message = await refusal(dir);
    expect(message).toContain(`log segment ${path(1)} is damaged: checksum mismatch at offset ${FRAME_BYTES}; it is not the newest segment, so this is not a torn write`);
    expect(message).toContain(
      `restore the file from a backup, or accept losing every record from seq 2 on: cut the file at the damage (truncate -s ${FRAME_BYTES} ${path(1)}) and move ${path(3)}, ${path(4)} out of the directory`,
    );
  });

  test('damage in the newest segment with intact records after it: not torn, and nothing else to move', async () => {
    const { dir, path } = directory([[1, [1]]]);
    const bytes = Buffer.concat([frame(1), frame(2), frame(3)]);
    bytes[FRAME_BYTES + FRAME_HEADER_BYTES]! ^= 0xff;
    writeFileSync(path(1), bytes);
    const message = await refusal(dir);
    expect(message).toContain(`checksum mismatch at offset ${FRAME_BYTES}; intact records follow the damage, so this is not a torn write`);
    expect(message).toContain(`cut the file at the damage (truncate -s ${FRAME_BYTES} ${path(1)}). Nothing in the directory was changed.`);
  });

  test('an intact frame with the wrong seq at the end of the newest segment: a sequence gap, not a torn write', async () => {
    const { dir, path } = directory([[1, [1, 2, 4]]]);
    const message = await refusal(dir);
    expect(message).toContain(
      `log segment ${path(1)} is damaged: sequence gap at offset ${2 * FRAME_BYTES} (expected seq 3, found 4); an intact frame with the wrong sequence number is not a torn write`,
    );
  });

  test('a log that does not start at seq 1 offers starting empty; after a snapshot it does not', async () => {
    const bare = directory([[3, [3]]]);
    expect(await refusal(bare.dir)).toContain(
      `records 1..2 are missing: the oldest log segment ${bare.path(3)} starts at seq 3. To start: restore the missing segment or snapshot from a backup, or move every log-*.seg out of the directory to start empty.`,
    );
    const afterSnapshot = directory([[8, [8]]]);
    await writeSnapshotFile(new FileStorage(), afterSnapshot.dir, 5, { chunks: [[1]][Symbol.iterator]() });
    expect(await refusal(afterSnapshot.dir)).toContain(
      `records 6..7 are missing: the oldest log segment ${afterSnapshot.path(8)} starts at seq 8. To start: restore the missing segment or snapshot from a backup.`,
    );
  });
});

describe('which snapshot recovery starts from', () => {
  const snapshot = (dir: string, seq: number) => writeSnapshotFile(new FileStorage(), dir, seq, { chunks: [[seq]][Symbol.iterator]() });
  const corrupt = (path: string) => writeFileSync(path, 'not a snapshot');

  async function recovered(dir: string) {
    const lines: string[] = [];
    const records: number[] = [];
    const chunks: unknown[] = [];
    const result = await recoverDataDir({
      dir,
      storage: new FileStorage(),
      log: (line) => lines.push(line),
      handler: { snapshotChunk: (chunk) => chunks.push(chunk), record: (record) => records.push((record as { n: number }).n) },
    });
    return { result, lines, records, chunks };
  }

  test('of several intact snapshots, the newest; files that are not data files are ignored', async () => {
    const { dir } = directory([[1, [1, 2, 3, 4, 5, 6, 7, 8]]]);
    for (const seq of [2, 6, 4]) await snapshot(dir, seq);
    writeFileSync(join(dir, 'notes.txt'), 'left by an operator');
    const { result, records, chunks } = await recovered(dir);
    expect(result.report.snapshotSeq).toBe(6);
    expect(chunks).toEqual([[6]]);
    expect(records).toEqual([7, 8]);
  });

  test('a corrupt newest and a corrupt older snapshot: both are said, and the complete log from seq 1 is used', async () => {
    const { dir } = directory([[1, [1, 2, 3, 4, 5, 6, 7]]]);
    const older = await snapshot(dir, 3);
    const newest = await snapshot(dir, 6);
    corrupt(older.path);
    corrupt(newest.path);
    const { result, lines, records } = await recovered(dir);
    expect(result.report.snapshotSeq).toBe(0);
    expect(records).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^older snapshot ${older.path} is corrupt too \\(.+\\); skipping it$`)));
  });

  test('a corrupt newest snapshot that nothing else reaches is refused, saying how far the log reaches', async () => {
    const { dir } = directory([[1, [1, 2, 3, 4, 5]]]);
    await snapshot(dir, 3);
    const newest = await snapshot(dir, 6);
    corrupt(newest.path);
    const message = await refusal(dir);
    expect(message).toContain(`snapshot ${newest.path} is corrupt`);
    // the older snapshot and the empty state both fall short; the last one tried is named
    expect(message).toContain('nothing holds every record up to its seq 6 (from an empty state the log reaches only seq 5)');
  });
});
