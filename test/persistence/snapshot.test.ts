import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DurabilityError, openDurableStore } from '../../persistence/durable-store.ts';
import type { DurableStore } from '../../persistence/durable-store.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { segmentFileName, snapshotFileName } from '../../persistence/file-names.ts';
import { MANIFEST_FILE } from '../../persistence/data-dir-manifest.ts';
import { FRAME_HEADER_BYTES } from '../../persistence/frame.ts';
import { encodeValue } from '../../persistence/record-codec.ts';
import { RecordingStorage } from '../../persistence/recording-storage.ts';

const tempDirs: string[] = [];
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

async function openRecovered(): Promise<{ store: DurableStore; storage: RecordingStorage; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-snapshot-'));
  tempDirs.push(dir);
  const storage = new RecordingStorage(new FileStorage());
  const store = await openDurableStore({ dir, storage, fsync: 'always', log: () => {} });
  await store.recover({ snapshotChunk: () => {}, record: () => {} });
  return { store, storage, dir };
}

function* chunksOf(values: readonly number[], size: number): Generator<number[]> {
  for (let start = 0; start < values.length; start += size) yield values.slice(start, start + size);
}

const upTo = (last: number): number[] => Array.from({ length: last }, (_, index) => index + 1);

describe('snapshots', () => {
  test('given records appended while a snapshot is written, then the snapshot covers the earlier ones and the log the later ones', async () => {
    const { store, storage, dir } = await openRecovered();
    for (let n = 1; n <= 10; n++) await store.append({ n });
    const logBytesBefore = store.logBytesSinceSnapshot;
    // Requests keep arriving: one append per event-loop turn until the snapshot is done.
    const appendedDuring: Promise<number>[] = [];
    let snapshotDone = false;
    const appendEachTurn = () => {
      if (snapshotDone) return;
      appendedDuring.push(store.append({ n: 11 + appendedDuring.length }));
      setImmediate(appendEachTurn);
    };
    setImmediate(appendEachTurn);

    const result = await store.writeSnapshot({ chunks: chunksOf(upTo(10), 2) });
    snapshotDone = true;
    await Promise.all(appendedDuring);
    await store.close();

    expect(result.seq).toBe(10);
    expect(result.bytes).toBeGreaterThan(0);
    expect(appendedDuring.length).toBeGreaterThan(0);
    const bytesAppendedDuring = upTo(appendedDuring.length).reduce((sum, index) => sum + FRAME_HEADER_BYTES + encodeValue({ n: 10 + index }).length, 0);
    expect(logBytesBefore).toBeGreaterThan(0);
    expect(store.logBytesSinceSnapshot).toBe(bytesAppendedDuring);
    const files = readdirSync(dir).sort();
    expect(files).toEqual([segmentFileName(11), MANIFEST_FILE, snapshotFileName(10)]);

    const state: number[] = [];
    const reopened = await openDurableStore({ dir, storage: new FileStorage(), fsync: 'always', log: () => {} });
    const report = await reopened.recover({
      snapshotChunk: (chunk) => state.push(...(chunk as number[])),
      record: (record) => state.push((record as { n: number }).n),
    });
    await reopened.close();
    expect(report.snapshotSeq).toBe(10);
    expect(report.recordsReplayed).toBe(appendedDuring.length);
    expect(state).toEqual(upTo(10 + appendedDuring.length));
  });

  test('given a snapshot, then covered segments are removed only after the rename and the directory sync', async () => {
    const { store, storage, dir } = await openRecovered();
    for (let n = 1; n <= 3; n++) await store.append({ n });

    await store.writeSnapshot({ chunks: chunksOf(upTo(3), 2) });

    const names = storage.operations.map((operation) => `${operation.name} ${operation.path.slice(dir.length + 1)}`);
    const rename = names.indexOf(`rename snapshot-00000000000000000003.tmp`);
    const syncAfterRename = names.indexOf('fsyncDir ', rename);
    const removeOldSegment = names.indexOf(`remove ${segmentFileName(1)}`);
    expect(names.lastIndexOf(`datasync snapshot-00000000000000000003.tmp`)).toBeLessThan(rename);
    expect(rename).toBeGreaterThan(-1);
    expect(syncAfterRename).toBeGreaterThan(rename);
    expect(removeOldSegment).toBeGreaterThan(syncAfterRename);
    await store.close();
  });

  test('given a snapshot write that fails, then it rejects, leaves no temp file, keeps the log, and appends go on', async () => {
    const { store, storage, dir } = await openRecovered();
    for (let n = 1; n <= 3; n++) await store.append({ n });
    storage.beforeOperation = (operation) => {
      if (operation.name === 'append' && operation.path.endsWith('.tmp')) throw new Error('ENOSPC: simulated full disk');
    };

    const error = await store.writeSnapshot({ chunks: chunksOf(upTo(3), 2) }).catch((caught: unknown) => caught);
    storage.beforeOperation = undefined;

    expect(error).toBeInstanceOf(DurabilityError);
    expect((error as Error).message).toContain('ENOSPC');
    expect(readdirSync(dir).filter((name) => name.startsWith('snapshot-'))).toEqual([]);
    expect(existsSync(join(dir, segmentFileName(1)))).toBe(true);
    expect(await store.append({ n: 4 })).toBe(4);
    await store.close();
  });

  test('given two snapshots with no appends between them, then the second reuses the empty segment', async () => {
    const { store, dir } = await openRecovered();
    await store.append({ n: 1 });

    await store.writeSnapshot({ chunks: chunksOf([1], 1) });
    const second = await store.writeSnapshot({ chunks: chunksOf([1], 1) });
    await store.close();

    expect(second.seq).toBe(1);
    expect(readdirSync(dir).sort()).toEqual([segmentFileName(2), MANIFEST_FILE, snapshotFileName(1)]);
  });
});

describe('snapshots and close', () => {
  test('given a snapshot in flight, when the store is closed, then close waits for it to finish', async () => {
    const { store, dir } = await openRecovered();
    await store.append({ n: 1 });

    const snapshot = store.writeSnapshot({ chunks: chunksOf(upTo(1), 1) });
    await store.close();

    expect((await snapshot).seq).toBe(1);
    expect(readdirSync(dir)).toContain(snapshotFileName(1));
  });
});
