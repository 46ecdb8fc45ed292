import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DurabilityError, openDurableStore } from '../../persistence/durable-store.ts';
import type { DurableStore, FsyncPolicy } from '../../persistence/durable-store.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { RecordingStorage } from '../../persistence/recording-storage.ts';

// The append path: group commit, what each policy syncs, and failure handling.

const tempDirs: string[] = [];
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

async function openRecovered(fsync: FsyncPolicy, lines: string[] = []): Promise<{ store: DurableStore; storage: RecordingStorage; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-log-'));
  tempDirs.push(dir);
  const storage = new RecordingStorage(new FileStorage());
  const store = await openDurableStore({ dir, storage, fsync, log: (line) => lines.push(line) });
  await store.recover({ snapshotChunk: () => {}, record: () => {} });
  return { store, storage, dir };
}

async function replayedRecords(dir: string): Promise<unknown[]> {
  const store = await openDurableStore({ dir, storage: new FileStorage(), fsync: 'always', log: () => {} });
  const records: unknown[] = [];
  await store.recover({ snapshotChunk: () => {}, record: (record) => records.push(record) });
  await store.close();
  return records;
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('durable store: appends', () => {
  test('given always, when 100 appends arrive in waves while a sync is in flight, then they share far fewer syncs and resolve in seq order', async () => {
    const { store, storage } = await openRecovered('always');
    const syncsBefore = storage.count('datasync', '.seg');
    const resolvedOrder: number[] = [];
    const appends: Promise<number>[] = [];

    for (let wave = 0; wave < 10; wave++) {
      for (let index = 0; index < 10; index++) {
        const seq = store.append({ wave, index });
        appends.push(seq);
        void seq.then((resolved) => resolvedOrder.push(resolved));
      }
      await Promise.resolve();
    }
    const seqs = await Promise.all(appends);

    const syncs = storage.count('datasync', '.seg') - syncsBefore;
    expect(seqs).toEqual(Array.from({ length: 100 }, (_, index) => index + 1));
    expect(resolvedOrder).toEqual(seqs);
    expect(syncs).toBeGreaterThanOrEqual(1);
    expect(syncs).toBeLessThan(10);
    await store.close();
  });

  test('given a record, when it is changed after append() returns, then the log holds it as it was at the call', async () => {
    const { store, dir } = await openRecovered('always');
    const record = { state: 'queued' };

    const appended = store.append(record);
    record.state = 'changed';
    await appended;
    await store.close();

    expect(await replayedRecords(dir)).toEqual([{ state: 'queued' }]);
  });

  test('given everysec, when an append resolves, then it was written but not yet synced; close syncs it', async () => {
    const { store, storage, dir } = await openRecovered('everysec');

    await store.append({ n: 1 });
    expect(storage.count('append', '.seg')).toBe(1);
    expect(storage.count('datasync', '.seg')).toBe(0);
    await store.close();

    expect(storage.count('datasync', '.seg')).toBe(1);
    expect(await replayedRecords(dir)).toEqual([{ n: 1 }]);
  });

  test('given no, when appends resolve, then nothing is synced on the append path', async () => {
    const { store, storage } = await openRecovered('no');
    await Promise.all([store.append({ n: 1 }), store.append({ n: 2 })]);
    await store.append({ n: 3 });
    expect(storage.count('datasync', '.seg')).toBe(0);
    await store.close();
  });

  test('given a store not yet recovered, when appending, then it rejects', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jobwatch-log-'));
    tempDirs.push(dir);
    const store = await openDurableStore({ dir, storage: new FileStorage(), fsync: 'always', log: () => {} });
    expect(String(await rejectionOf(store.append({ n: 1 })))).toContain('before recover()');
  });
});

describe('durable store: failures', () => {
  test('given a failing fdatasync, then the pending appends and every later one reject with DurabilityError', async () => {
    const lines: string[] = [];
    const { store, storage } = await openRecovered('always', lines);
    expect(await store.append({ n: 1 })).toBe(1);
    storage.beforeOperation = (operation) => {
      if (operation.name === 'datasync') throw new Error('EIO: simulated fdatasync failure');
    };

    const pending = [store.append({ n: 2 }), store.append({ n: 3 })].map(rejectionOf);
    const [second, third] = await Promise.all(pending);
    const operationsAfterFailure = storage.operations.length;
    const later = await rejectionOf(store.append({ n: 4 }));

    for (const error of [second, third, later]) {
      expect(error).toBeInstanceOf(DurabilityError);
      expect((error as Error).message).toContain('EIO: simulated fdatasync failure');
    }
    expect(storage.operations.length).toBe(operationsAfterFailure);
    expect(lines).toContainEqual(expect.stringContaining('no later append is accepted'));
    expect(await rejectionOf(store.writeSnapshot({ chunks: [][Symbol.iterator]() }))).toBeInstanceOf(DurabilityError);
    await store.close();
  });

  test('given a failing write under everysec, then the append rejects and the store stays failed', async () => {
    const { store, storage } = await openRecovered('everysec');
    storage.beforeOperation = (operation) => {
      if (operation.name === 'append') throw new Error('ENOSPC: simulated full disk');
    };

    expect(await rejectionOf(store.append({ n: 1 }))).toBeInstanceOf(DurabilityError);
    storage.beforeOperation = undefined;
    expect(await rejectionOf(store.append({ n: 2 }))).toBeInstanceOf(DurabilityError);
    await store.close();
  });
});
