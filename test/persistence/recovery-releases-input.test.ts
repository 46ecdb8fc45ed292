/**
 * After recovery nothing keeps the bytes it read: a snapshot file is hundreds of MB at
 * a million jobs, and a restarted service used to hold it until its first request
 * (msgpackr keeps a view of the last buffer it decoded).
 */
import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDurableStore } from '../../persistence/durable-store.ts';
import { FileStorage } from '../../persistence/file-storage.ts';

const tempDirs: string[] = [];
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** FileStorage that remembers, weakly, every buffer it read. */
class WatchedStorage extends FileStorage {
  readonly read: Array<WeakRef<ArrayBufferLike>> = [];
  override async readFile(path: string): Promise<Uint8Array> {
    const bytes = await super.readFile(path);
    this.read.push(new WeakRef(bytes.buffer));
    return bytes;
  }
}

async function writeSnapshotAndClose(dir: string): Promise<void> {
  const store = await openDurableStore({ dir, storage: new FileStorage(), fsync: 'no', log: () => {} });
  await store.recover({ snapshotChunk: () => {}, record: () => {} });
  await store.append({ n: 1 });
  const chunks = Array.from({ length: 4 }, (_, index) => ({ index, names: Array.from({ length: 500 }, (_, n) => `job-name-${index}-${n}`) }));
  await store.writeSnapshot({ chunks: chunks.values() });
  await store.close();
}

async function recoverKeepingNothing(dir: string, storage: WatchedStorage): Promise<number> {
  const store = await openDurableStore({ dir, storage, fsync: 'no', log: () => {} });
  let chunks = 0;
  await store.recover({ snapshotChunk: () => chunks++, record: () => {} });
  await store.close();
  return chunks;
}

test('given a snapshot recovered by a handler that keeps nothing, then no buffer recovery read stays reachable', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-release-'));
  tempDirs.push(dir);
  await writeSnapshotAndClose(dir);
  const storage = new WatchedStorage();
  expect(await recoverKeepingNothing(dir, storage)).toBe(4);
  expect(storage.read.length).toBeGreaterThan(0);
  await new Promise((resolve) => setImmediate(resolve));
  Bun.gc(true);
  expect(storage.read.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
});
