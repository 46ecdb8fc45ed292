/**
 * What recovery does besides rebuilding the state: it syncs every file it replayed
 * (bytes read back from the page cache may not be on disk yet), reports exactly the
 * lines it logged, how long it took and where that time went, says "starting empty" only for a directory with
 * no snapshot and no log, and hands the newest segment to the writer to continue in.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDurableStore } from '../../persistence/durable-store.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { RecordingStorage } from '../../persistence/recording-storage.ts';
import { recoverDataDir } from '../../persistence/recovery.ts';
import { spend } from '../support/spend.ts';

const tempDirs: string[] = [];
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-recovery-details-'));
  tempDirs.push(dir);
  return dir;
}

/** `count` records { n } in segments of at most `segmentBytesMax`, then an optional snapshot of them. */
async function history(dir: string, count: number, options: { segmentBytesMax?: number; snapshot?: boolean } = {}): Promise<void> {
  const store = await openDurableStore({ dir, storage: new FileStorage(), fsync: 'no', segmentBytesMax: options.segmentBytesMax, log: () => {} });
  await store.recover({ snapshotChunk: () => {}, record: () => {} });
  for (let n = 1; n <= count; n++) await store.append({ n });
  if (options.snapshot) await store.writeSnapshot({ chunks: [[...Array(count).keys()]][Symbol.iterator]() });
  await store.close();
}

/** A snapshot of `snapshotted` records, then `after` more records in the log after it. */
async function snapshotThenRecords(dir: string, snapshotted: number, after: number): Promise<void> {
  await history(dir, snapshotted, { snapshot: true });
  await history(dir, 0); // reopen: the snapshot stays, the log after it is empty...
  const store = await openDurableStore({ dir, storage: new FileStorage(), fsync: 'no', log: () => {} });
  await store.recover({ snapshotChunk: () => {}, record: () => {} });
  for (let n = snapshotted + 1; n <= snapshotted + after; n++) await store.append({ n }); // ...then the records after it
  await store.close();
}

async function recoverWith(dir: string, storage = new RecordingStorage(new FileStorage())) {
  const logged: string[] = [];
  const records: number[] = [];
  const result = await recoverDataDir({
    dir,
    storage,
    log: (line) => logged.push(line),
    handler: { snapshotChunk: () => {}, record: (record) => records.push((record as { n: number }).n) },
  });
  return { result, logged, records, storage };
}

describe('recovery details', () => {
  test('every replayed segment and the snapshot are synced, then the directory, before anything is replayed', async () => {
    const dir = freshDir();
    await history(dir, 4, { snapshot: true });
    await history(dir, 0); // reopen: appends nothing
    const store = await openDurableStore({ dir, storage: new FileStorage(), fsync: 'no', segmentBytesMax: 60, log: () => {} });
    await store.recover({ snapshotChunk: () => {}, record: () => {} });
    for (let n = 5; n <= 8; n++) await store.append({ n });
    await store.close();
    const files = readdirSync(dir).sort();
    const segments = files.filter((name) => name.startsWith('log-'));
    expect(segments.length).toBeGreaterThan(1);

    const { storage, records } = await recoverWith(dir);

    expect(records).toEqual([5, 6, 7, 8]);
    const synced = storage.operations.filter((operation) => operation.name === 'datasync').map((operation) => operation.path.slice(dir.length + 1));
    expect(synced.sort()).toEqual([...segments, files.find((name) => name.endsWith('.snap'))!].sort());
    const names = storage.operations.map((operation) => operation.name);
    expect(names.indexOf('fsyncDir')).toBeGreaterThan(names.lastIndexOf('datasync'));
    expect(storage.count('close')).toBe(storage.count('openAppend'));
  });

  test('a directory with only a log or only a snapshot is not reported as empty; the report holds exactly the lines logged', async () => {
    const onlyLog = freshDir();
    await history(onlyLog, 2);
    const fromLog = await recoverWith(onlyLog);
    expect(fromLog.logged.some((line) => line.includes('starting empty'))).toBe(false);
    expect(fromLog.result.report.lines).toEqual(fromLog.logged);
    expect(fromLog.logged.at(-2)).toMatch(/^recovered from an empty state \(seq 0\) and 2 log records in \d+ ms; last seq 2$/);

    const empty = freshDir();
    const fromNothing = await recoverWith(empty);
    expect(fromNothing.logged[0]).toBe(`data directory ${empty} holds no snapshot and no log: starting empty`);
    expect(fromNothing.result.report.lines).toEqual(fromNothing.logged);
  });

  test('the reported duration is the time recovery took, the handler\'s work included', async () => {
    const dir = freshDir();
    await snapshotThenRecords(dir, 2, 2);
    const before = performance.now();
    // the snapshot takes the handler 30 ms and each record 10 ms: recovery cannot have taken less than 50 ms
    const handler = { snapshotChunk: () => spend(30), record: () => spend(10) };
    const result = await recoverDataDir({ dir, storage: new FileStorage(), log: () => {}, handler });
    const took = performance.now() - before;
    expect(result.report.recordsReplayed).toBe(2);
    expect(result.report.durationMs).toBeGreaterThanOrEqual(50);
    expect(result.report.durationMs).toBeLessThanOrEqual(took);
  });

  test('the summary is followed by its phases, in order, each timed on its own, adding up to no more than the whole', async () => {
    const dir = freshDir();
    await snapshotThenRecords(dir, 3, 2);
    const logged: string[] = [];
    const fields: Array<Record<string, unknown> | undefined> = [];
    const restored: unknown[] = [];
    const { report } = await recoverDataDir({
      dir,
      storage: new FileStorage(),
      log: (line, lineFields) => {
        logged.push(line);
        fields.push(lineFields);
      },
      // the snapshot takes the handler 20 ms, and each of the two records 10 ms
      handler: {
        snapshotChunk: (chunk) => {
          restored.push(chunk);
          spend(20);
        },
        record: () => spend(10),
      },
    });

    expect(restored).toEqual([[0, 1, 2]]);
    expect(logged.at(-2)).toMatch(/^recovered from snapshot \S+ \(seq 3\) and 2 log records in \d+ ms; last seq 5$/);
    const phasesLine = logged.at(-1)!;
    expect(phasesLine).toMatch(/^recovery phases: read \d+ ms, decode \d+ ms, restore \d+ ms, replay \d+ ms, sync \d+ ms$/);
    const phases = report.phases!;
    expect(phases.map((phase) => phase.name)).toEqual(['read', 'decode', 'restore', 'replay', 'sync']);
    const msOf = (name: string) => phases.find((phase) => phase.name === name)!.ms;
    expect(msOf('restore')).toBeGreaterThanOrEqual(20);
    expect(msOf('replay')).toBeGreaterThanOrEqual(20);
    // each phase timed on its own: the slow restore is not counted again in the replay, nor the reverse
    expect(phases.reduce((sum, phase) => sum + phase.ms, 0)).toBeLessThanOrEqual(report.durationMs);
    expect(fields.at(-1)).toEqual({
      phasesMs: Object.fromEntries(phases.map((phase) => [phase.name, Math.round(phase.ms)])),
      durationMs: Math.round(report.durationMs),
    });
  });

  test("a handler that times its own snapshot work names the phases it took in place of 'restore'", async () => {
    const dir = freshDir();
    await history(dir, 2, { snapshot: true });
    const logged: string[] = [];
    const { report } = await recoverDataDir({
      dir,
      storage: new FileStorage(),
      log: (line) => logged.push(line),
      handler: {
        snapshotChunk: () => {},
        record: () => {},
        snapshotChunkPhases: () => [
          { name: 'rows', ms: 1234.4 },
          { name: 'lookups', ms: 0.6 },
        ],
      },
    });
    expect(report.phases!.map((phase) => phase.name)).toEqual(['read', 'decode', 'rows', 'lookups', 'replay', 'sync']);
    expect(logged.at(-1)).toMatch(/^recovery phases: read \d+ ms, decode \d+ ms, rows 1,234 ms, lookups 1 ms, replay \d+ ms, sync \d+ ms$/);
  });

  test('with several segments, the writer continues in the newest one, and a reopened store appends there', async () => {
    const dir = freshDir();
    await history(dir, 9, { segmentBytesMax: 60 });
    const segments = readdirSync(dir).filter((name) => name.startsWith('log-')).sort();
    expect(segments.length).toBeGreaterThanOrEqual(3);

    const { result } = await recoverWith(dir);
    expect(result.continueSegment?.path).toBe(join(dir, segments.at(-1)!));
    expect(result.lastSeq).toBe(9);
  });
});
