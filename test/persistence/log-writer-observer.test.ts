/**
 * The log writer's observer (metrics and the ingest timings listen through it): each group
 * commit's write and each fdatasync are reported once, with durations within the time the
 * appends took, and `observeAll` hands every report to every listener. Also the encoding
 * step both logs (local and JetStream) append through.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDurableStore } from '../../persistence/durable-store.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { observeAll, type LogWriterObserver } from '../../persistence/log-writer.ts';
import { appendEncoded } from '../../persistence/record-codec.ts';
import { RecordingStorage } from '../../persistence/recording-storage.ts';
import { spend } from '../support/spend.ts';

const tempDirs: string[] = [];
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

interface Reports {
  writes: Array<{ records: number; bytes: number; writeMs: number }>;
  syncs: number[];
}

function recordingObserver(): LogWriterObserver & Reports {
  const writes: Reports['writes'] = [];
  const syncs: number[] = [];
  return {
    writes,
    syncs,
    batchWritten: (records, bytes, writeMs) => writes.push({ records, bytes, writeMs }),
    synced: (syncMs) => syncs.push(syncMs),
  };
}

describe('observeAll', () => {
  test('no listener gives no observer; one listener is used as it is', () => {
    const one = recordingObserver();
    expect(observeAll([])).toBeUndefined();
    expect(observeAll([undefined, undefined])).toBeUndefined();
    expect(observeAll([undefined, one])).toBe(one);
  });

  test('two listeners both get every report, with its figures', () => {
    const first = recordingObserver();
    const second = recordingObserver();
    const both = observeAll([first, undefined, second])!;
    both.batchWritten(3, 120, 1.5);
    both.synced(2.5);
    for (const listener of [first, second]) {
      expect(listener.writes).toEqual([{ records: 3, bytes: 120, writeMs: 1.5 }]);
      expect(listener.syncs).toEqual([2.5]);
    }
  });
});

describe('the log writer reports to its observer', () => {
  test('under always: one write and one sync per group commit, records and bytes counted, durations within the wall time', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jobwatch-observer-'));
    tempDirs.push(dir);
    const observer = recordingObserver();
    // every write and every sync of the log takes at least 3 ms: each reported duration covers it
    const storage = new RecordingStorage(new FileStorage());
    const store = await openDurableStore({ dir, storage, fsync: 'always', log: () => {}, observer });
    await store.recover({ snapshotChunk: () => {}, record: () => {} });
    storage.beforeOperation = (operation) => {
      if (operation.name === 'append' || operation.name === 'datasync') spend(3);
    };
    const startedMs = performance.now();
    await store.append({ t: 'first' });
    await Promise.all([store.append({ t: 'a' }), store.append({ t: 'b' }), store.append({ t: 'c' })]);
    const wallMs = performance.now() - startedMs;
    await store.close();

    expect(observer.writes.map((write) => write.records).reduce((sum, records) => sum + records, 0)).toBe(4);
    expect(observer.writes.every((write) => write.bytes > 20)).toBe(true); // a frame header and a payload each
    expect(observer.syncs.length).toBeGreaterThanOrEqual(observer.writes.length);
    for (const ms of [...observer.writes.map((write) => write.writeMs), ...observer.syncs]) {
      expect(ms).toBeGreaterThanOrEqual(3);
      expect(ms).toBeLessThanOrEqual(wallMs + 0.1);
    }
  });
});

describe('appendEncoded', () => {
  test('a record msgpack cannot encode is the append\'s rejection, and nothing reaches the log', async () => {
    const appended: Uint8Array[] = [];
    const append = async (payload: Uint8Array) => appended.push(payload);
    const refused = appendEncoded({ t: 'huge', value: 2n ** 70n }, append);
    await expect(refused).rejects.toThrow(/too large to fit in MessagePack/);
    expect(appended).toEqual([]);
    expect(await appendEncoded({ t: 'fine' }, append)).toBe(1);
    expect(appended).toHaveLength(1);
  });
});
