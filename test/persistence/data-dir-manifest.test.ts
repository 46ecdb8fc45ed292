/**
 * The manifest beside the log (persistence/data-dir-manifest.ts): it names the newest
 * segment before any record in it is acknowledged, so a deleted newest segment, which
 * leaves a log that looks whole, is refused at start; it keeps the marks the engine asks
 * for; a directory of an older version, without one, starts and gets one.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MANIFEST_FILE } from '../../persistence/data-dir-manifest.ts';
import { openDurableStore, RecoveryRefusedError, type DurableStore } from '../../persistence/durable-store.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { segmentFileName } from '../../persistence/file-names.ts';
import { RecordingStorage } from '../../persistence/recording-storage.ts';

const tempDirs: string[] = [];
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-manifest-'));
  tempDirs.push(dir);
  return dir;
}

async function opened(dir: string, storage = new FileStorage(), segmentBytesMax?: number): Promise<{ store: DurableStore; records: unknown[]; marks: readonly string[] | undefined }> {
  const store = await openDurableStore({ dir, storage, fsync: 'always', segmentBytesMax, log: () => {} });
  const records: unknown[] = [];
  const report = await store.recover({ snapshotChunk: () => {}, record: (record) => records.push(record) });
  return { store, records, marks: report.marks };
}

const manifestOf = (dir: string): unknown => JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8'));

async function refusal(dir: string): Promise<RecoveryRefusedError> {
  const error = await opened(dir).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(RecoveryRefusedError);
  return error as RecoveryRefusedError;
}

describe('the newest segment', () => {
  test('deleting it after records were acknowledged in it is refused at start, naming it; an empty one in its place accepts the loss', async () => {
    const dir = freshDir();
    const { store } = await opened(dir, new FileStorage(), 1); // a segment per record
    for (let n = 1; n <= 3; n++) await store.append({ n });
    await store.close();
    expect(manifestOf(dir)).toEqual({ format: 1, newestSegment: 3, marks: [] });
    const newest = join(dir, segmentFileName(3));
    unlinkSync(newest);

    const error = await refusal(dir);
    expect(error.message).toBe(
      `refusing to start from data directory ${dir}: the newest log segment ${newest} is missing: ${join(dir, MANIFEST_FILE)} names it as the last one the log began, ` +
        `so the records it held (from seq 3 on) were acknowledged and are gone. To start: restore ${newest} from a backup; or, to accept losing whatever it held, ` +
        `create it empty (touch ${newest}) and start again. Nothing in the directory was changed.`,
    );
    expect(existsSync(newest)).toBe(false);

    writeFileSync(newest, '');
    const { store: accepted, records } = await opened(dir);
    expect(records).toEqual([{ n: 1 }, { n: 2 }]);
    expect(await accepted.append({ n: 3 })).toBe(3);
    await accepted.close();
  });

  test('deleting every segment and snapshot while the manifest stays is refused too', async () => {
    const dir = freshDir();
    const { store } = await opened(dir);
    await store.append({ n: 1 });
    await store.close();
    unlinkSync(join(dir, segmentFileName(1)));
    expect((await refusal(dir)).message).toContain(`the newest log segment ${join(dir, segmentFileName(1))} is missing`);
  });

  test('a new segment is in the manifest before any record in it is written', async () => {
    const dir = freshDir();
    const storage = new RecordingStorage(new FileStorage());
    const { store } = await opened(dir, storage, 1);
    await store.append({ n: 1 });
    await store.append({ n: 2 });
    await store.close();
    const names = storage.operations.map((operation) => `${operation.name} ${operation.path.slice(dir.length + 1)}`);
    const created = names.indexOf(`openAppend ${segmentFileName(2)}`);
    const named = names.indexOf(`rename ${MANIFEST_FILE}.new`, created);
    const firstWrite = names.indexOf(`append ${segmentFileName(2)}`);
    expect(created).toBeGreaterThan(-1);
    expect(named).toBeGreaterThan(created);
    expect(firstWrite).toBeGreaterThan(named);
    expect(names.indexOf('fsyncDir ', named)).toBeLessThan(firstWrite);
  });

  test('a directory written before the manifest starts, and gets one naming the segment it appends to', async () => {
    const dir = freshDir();
    const { store } = await opened(dir);
    await store.append({ n: 1 });
    await store.close();
    unlinkSync(join(dir, MANIFEST_FILE));
    const { store: again, records } = await opened(dir);
    expect(records).toEqual([{ n: 1 }]);
    expect(manifestOf(dir)).toEqual({ format: 1, newestSegment: 1, marks: [] });
    await again.close();
  });

  test('a damaged manifest is refused, saying what it should hold; without it the directory starts', async () => {
    const dir = freshDir();
    const { store } = await opened(dir);
    await store.append({ n: 1 });
    await store.close();
    writeFileSync(join(dir, MANIFEST_FILE), '{"format":1,"newestSegment":"one"}');
    const error = await refusal(dir);
    expect(error.message).toContain(`${join(dir, MANIFEST_FILE)} is damaged: expected {"format":1,"newestSegment":<seq or null>,"marks":[<names>]}, found {"format":1,"newestSegment":"one"}`);
    expect(error.message).toContain('remove it (this start then cannot tell whether the newest log segment or every account went missing)');
    writeFileSync(join(dir, MANIFEST_FILE), 'not json');
    expect((await refusal(dir)).message).toContain('is damaged: not JSON');
    unlinkSync(join(dir, MANIFEST_FILE));
    const { store: again, records } = await opened(dir);
    expect(records).toEqual([{ n: 1 }]);
    await again.close();
  });
});

describe('marks', () => {
  test('a mark is kept from the call on, once, and every later recovery reports it', async () => {
    const dir = freshDir();
    const first = await opened(dir);
    expect(first.marks).toEqual([]);
    await first.store.mark!('accounts');
    await first.store.mark!('accounts');
    await first.store.append({ n: 1 });
    await first.store.close();
    expect(manifestOf(dir)).toEqual({ format: 1, newestSegment: 1, marks: ['accounts'] });
    const second = await opened(dir);
    expect(second.marks).toEqual(['accounts']);
    await second.store.close();
  });
});
