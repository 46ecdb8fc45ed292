/**
 * The durable store at its edges: when segments rotate (exactly full is not over), what
 * a snapshot removes (older snapshots too, and nothing it cannot parse), the everysec
 * background sync actually running, and the calls it refuses (a second recover, a
 * second snapshot at once, appends after close, a segment size that is not positive).
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDurableStore, type DurableStore, type FsyncPolicy } from '../../persistence/durable-store.ts';
import { MANIFEST_FILE } from '../../persistence/data-dir-manifest.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { segmentFileName, snapshotFileName } from '../../persistence/file-names.ts';
import { FRAME_HEADER_BYTES } from '../../persistence/frame.ts';
import { encodeValue } from '../../persistence/record-codec.ts';
import { RecordingStorage } from '../../persistence/recording-storage.ts';
import { spend } from '../support/spend.ts';

const tempDirs: string[] = [];
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-store-edges-'));
  tempDirs.push(dir);
  return dir;
}

async function opened(options: { fsync?: FsyncPolicy; segmentBytesMax?: number; dir?: string; lines?: string[] } = {}) {
  const dir = options.dir ?? freshDir();
  const storage = new RecordingStorage(new FileStorage());
  const store = await openDurableStore({
    dir,
    storage,
    fsync: options.fsync ?? 'always',
    segmentBytesMax: options.segmentBytesMax,
    log: (line) => options.lines?.push(line),
  });
  await store.recover({ snapshotChunk: () => {}, record: () => {} });
  return { dir, storage, store };
}

const segments = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.seg')).sort();
const frameBytes = (record: unknown) => FRAME_HEADER_BYTES + encodeValue(record).length;
const chunks = (...values: unknown[]) => ({ chunks: values[Symbol.iterator]() });

describe('segments', () => {
  test('a segment filled exactly to segmentBytesMax takes no new segment; one byte more starts the next', async () => {
    const exact = frameBytes({ n: 1 }) + frameBytes({ n: 2 });
    const { dir, store } = await opened({ segmentBytesMax: exact });
    await store.append({ n: 1 });
    await store.append({ n: 2 });
    expect(segments(dir)).toEqual([segmentFileName(1)]);
    await store.append({ n: 3 });
    expect(segments(dir)).toEqual([segmentFileName(1), segmentFileName(3)]);
    await store.close();
  });

  test('a record larger than segmentBytesMax still goes into the empty segment it finds', async () => {
    const { dir, store } = await opened({ segmentBytesMax: 8 });
    expect(await store.append({ n: 1, padding: 'x'.repeat(100) })).toBe(1);
    expect(await store.append({ n: 2, padding: 'x'.repeat(100) })).toBe(2);
    expect(segments(dir)).toEqual([segmentFileName(1), segmentFileName(2)]);
    await store.close();
  });

  test('segmentBytesMax must be a positive whole number', async () => {
    for (const segmentBytesMax of [0, -1, 1.5]) {
      await expect(openDurableStore({ dir: freshDir(), storage: new FileStorage(), fsync: 'always', segmentBytesMax, log: () => {} })).rejects.toThrow(
        `segmentBytesMax ${segmentBytesMax} must be a positive integer`,
      );
    }
  });
});

describe('snapshots', () => {
  test('a newer snapshot removes the older snapshot and the covered segments, and leaves files it does not recognise', async () => {
    const { dir, store } = await opened();
    writeFileSync(join(dir, 'notes.txt'), 'an operator left this here');
    await store.append({ n: 1 });
    await store.writeSnapshot(chunks([1]));
    await store.append({ n: 2 });
    const second = await store.writeSnapshot(chunks([1, 2]));
    await store.close();
    expect(second.seq).toBe(2);
    expect(readdirSync(dir).sort()).toEqual([segmentFileName(3), MANIFEST_FILE, 'notes.txt', snapshotFileName(2)]);
  });

  test('a second snapshot while one is being written is refused; the first completes', async () => {
    const { store } = await opened();
    await store.append({ n: 1 });
    const first = store.writeSnapshot(chunks([1], [2], [3]));
    await expect(store.writeSnapshot(chunks([1]))).rejects.toThrow('a snapshot is already being written');
    expect((await first).seq).toBe(1);
    await store.close();
  });

  test('a failed snapshot is logged with its seq and the reason; its duration is measured from its start', async () => {
    const lines: string[] = [];
    const { store, storage } = await opened({ lines });
    await store.append({ n: 1 });
    const before = performance.now();
    // making its one chunk takes 20 ms: the snapshot cannot have taken less
    const slowChunk = (function* () {
      spend(20);
      yield [1];
    })();
    const ok = await store.writeSnapshot({ chunks: slowChunk });
    expect(ok.durationMs).toBeGreaterThanOrEqual(20);
    expect(ok.durationMs).toBeLessThanOrEqual(performance.now() - before);
    await store.append({ n: 2 });
    storage.beforeOperation = (operation) => {
      if (operation.name === 'append' && operation.path.endsWith('.tmp')) throw new Error('EIO: simulated');
    };
    await expect(store.writeSnapshot(chunks([1, 2]))).rejects.toThrow('EIO');
    storage.beforeOperation = undefined;
    expect(lines).toContainEqual(expect.stringMatching(/^snapshot at seq 2 failed: snapshot .* was not written: EIO: simulated$/));
    await store.close();
  });
});

describe('lifecycle', () => {
  test('before recovery the store reports seq 0 and no log bytes; recover runs once', async () => {
    const store: DurableStore = await openDurableStore({ dir: freshDir(), storage: new FileStorage(), fsync: 'always', log: () => {} });
    expect(store.lastSeq).toBe(0);
    expect(store.logBytesSinceSnapshot).toBe(0);
    await store.recover({ snapshotChunk: () => {}, record: () => {} });
    await expect(store.recover({ snapshotChunk: () => {}, record: () => {} })).rejects.toThrow('recover() is called once per store');
    await store.close();
  });

  test('after close, appends are refused and a second close does nothing', async () => {
    const { store, storage } = await opened();
    await store.append({ n: 1 });
    await store.close();
    const closes = storage.count('close');
    await store.close();
    expect(storage.count('close')).toBe(closes);
    await expect(store.append({ n: 2 })).rejects.toThrow('the durable store is closed');
  });

  test('no: nothing is synced in the background either', async () => {
    const { store, storage } = await opened({ fsync: 'no' });
    await store.append({ n: 1 });
    await Bun.sleep(1_500); // past the everysec interval
    expect(storage.count('datasync', '.seg')).toBe(0);
    await store.close();
  }, 20_000);

  test('a failed sync is a DurabilityError carrying the disk error as its cause', async () => {
    const { store, storage } = await opened({ fsync: 'always' });
    const diskError = new Error('EIO: simulated');
    storage.beforeOperation = (operation) => {
      if (operation.name === 'datasync') throw diskError;
    };
    const error = await store.append({ n: 1 }).catch((caught: unknown) => caught);
    expect((error as Error).name).toBe('DurabilityError');
    expect((error as Error).cause).toBe(diskError);
    storage.beforeOperation = undefined;
    await store.close();
  });

  test('everysec: a written record is synced in the background within about a second, and an idle log is not synced again', async () => {
    const { store, storage } = await opened({ fsync: 'everysec' });
    await store.append({ n: 1 });
    const deadline = Date.now() + 10_000;
    while (storage.count('datasync', '.seg') === 0 && Date.now() < deadline) await Bun.sleep(50);
    expect(storage.count('datasync', '.seg')).toBe(1);
    await Bun.sleep(2_500); // two more ticks with nothing written
    expect(storage.count('datasync', '.seg')).toBe(1);
    await store.close();
  }, 20_000);
});
