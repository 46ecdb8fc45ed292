/**
 * Damage to the log files between a crash and the restart, done by hand to the files in
 * DATA_DIR/log (log-<20-digit first seq>.seg, frames of magic|length|crc|seq|payload):
 * - a torn tail (garbage after the last frame, or the last frame cut short) is cut off,
 *   with a log line naming the file, the offset and the bytes dropped, and start-up goes on;
 * - damage in the middle of a segment, with intact frames after it, is refused: the
 *   process exits non-zero, says what to do, and changes nothing on disk.
 */
import { describe, expect, test } from 'bun:test';
import { appendFileSync, existsSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  FRAME_HEADER_BYTES,
  batchOfJobs,
  createConnection,
  frameLayout,
  ingest,
  listAllJobs,
  login,
  makeDataDir,
  seededRandom,
  segmentFiles,
  spawnService,
  startService,
  TEST_TIMEOUT_MS,
  testSeed,
  type Connection,
  cleanUpServices,
} from './service-process.ts';

const BATCHES = 6;
const EVENTS_PER_BATCH = 10;
const env = { ADMIN_EMAIL, ADMIN_PASSWORD, DAILY_EVENT_LIMIT: '0', FSYNC: 'always' };

const dirs = cleanUpServices();

interface Prepared {
  dataDir: string;
  connection: Connection;
  cookie: string;
  /** externalIds per acknowledged batch, in the order they were acknowledged */
  batches: string[][];
  segment: string;
}

/** A data directory holding BATCHES acknowledged ingest batches, left by a SIGKILL (no snapshot). */
async function prepareKilledDataDir(label: string): Promise<Prepared> {
  const dataDir = makeDataDir(label);
  dirs.push(dataDir);
  const service = await startService({ dataDir, env });
  const cookie = await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(service.baseUrl, cookie, label);
  const batches: string[][] = [];
  for (let batch = 0; batch < BATCHES; batch++) {
    const events = batchOfJobs(connection.id, `${label}-b${batch}`, EVENTS_PER_BATCH);
    const result = await ingest(service.baseUrl, connection.apiKey, events);
    expect(result.status).toBe(200);
    expect(result.body.accepted).toBe(EVENTS_PER_BATCH);
    batches.push(events.map((event) => event.job.externalId));
  }
  await service.kill();
  // the store of the connection's records: the only one, or its shard's (WORKERS above 1)
  const segments = segmentFiles(dataDir, connection.id);
  expect(segments).toHaveLength(1); // no snapshot was taken, so one segment holds everything
  return { dataDir, connection, cookie, batches, segment: segments[0]! };
}

async function externalIdsAfterRestart(dataDir: string, cookie: string): Promise<{ ids: Set<string>; output: string }> {
  const service = await startService({ dataDir, env });
  const ids = new Set((await listAllJobs(service.baseUrl, cookie)).map((job) => job.externalId));
  await service.kill();
  return { ids, output: service.output };
}

describe('torn tail of the newest segment', () => {
  test('garbage appended after the last frame is cut off, logged with file, offset and bytes; nothing acknowledged is lost', async () => {
    const seed = testSeed();
    const random = seededRandom(seed);
    const { dataDir, connection, cookie, batches, segment } = await prepareKilledDataDir('garbage');
    const intactBytes = statSync(segment).size;
    const garbage = Uint8Array.from({ length: 37 }, () => Math.floor(random() * 256));
    appendFileSync(segment, garbage);

    const service = await startService({ dataDir, env });
    const context = `(seed ${seed}, garbage ${Buffer.from(garbage).toString('hex')})`;
    expect(service.output, context).toContain(`cut the torn tail of ${segment} at offset ${intactBytes}: dropped ${garbage.length} bytes`);
    expect(service.output, context).toMatch(new RegExp(`recovered: snapshot seq 0, \\d+ records replayed, ${garbage.length} torn bytes cut`));
    const ids = new Set((await listAllJobs(service.baseUrl, cookie)).map((job) => job.externalId));
    expect(ids, context).toEqual(new Set(batches.flat()));

    // appends continue after the cut; the next restart finds a clean log
    const late = batchOfJobs(connection.id, 'garbage-late', 4);
    expect((await ingest(service.baseUrl, connection.apiKey, late)).body.accepted).toBe(4);
    await service.kill();
    const again = await externalIdsAfterRestart(dataDir, cookie);
    expect(again.output).not.toContain('torn');
    expect(again.ids).toEqual(new Set([...batches.flat(), ...late.map((event) => event.job.externalId)]));
  }, TEST_TIMEOUT_MS);

  test('a last frame cut short is dropped whole: that batch is gone entirely, every earlier one is there', async () => {
    const { dataDir, connection, cookie, batches, segment } = await prepareKilledDataDir('cut');
    const frames = frameLayout(readFileSync(segment));
    expect(frames.reduce((sum, frame) => sum + frame.bytes, 0)).toBe(statSync(segment).size);
    const lastFrame = frames.at(-1)!;
    const cutBytes = 7;
    truncateSync(segment, statSync(segment).size - cutBytes);

    const service = await startService({ dataDir, env });
    expect(service.output).toContain(`cut the torn tail of ${segment} at offset ${lastFrame.offset}: dropped ${lastFrame.bytes - cutBytes} bytes`);
    expect(service.output).toMatch(new RegExp(`, ${lastFrame.bytes - cutBytes} torn bytes cut`));
    const ids = new Set((await listAllJobs(service.baseUrl, cookie)).map((job) => job.externalId));
    // The last frame was the last acknowledged batch (the test cut an fsynced record to play
    // a torn write): it is dropped as a whole, nothing of it half-applied.
    expect(ids).toEqual(new Set(batches.slice(0, -1).flat()));

    const late = batchOfJobs(connection.id, 'cut-late', 4);
    expect((await ingest(service.baseUrl, connection.apiKey, late)).body.accepted).toBe(4);
    await service.kill();
    const again = await externalIdsAfterRestart(dataDir, cookie);
    expect(again.output).not.toContain('torn');
    expect(again.ids).toEqual(new Set([...batches.slice(0, -1).flat(), ...late.map((event) => event.job.externalId)]));
  }, TEST_TIMEOUT_MS);
  test('after a clean stop (snapshot, fresh empty segment): garbage in the new segment is cut at offset 0, later records survive', async () => {
    const dataDir = makeDataDir('after-snapshot');
    dirs.push(dataDir);
    const first = await startService({ dataDir, env });
    const cookie = await login(first.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
    const connection = await createConnection(first.baseUrl, cookie, 'after-snapshot');
    const before = batchOfJobs(connection.id, 'snap-before', 8);
    expect((await ingest(first.baseUrl, connection.apiKey, before)).body.accepted).toBe(8);
    expect(await first.stop()).toBe(0);
    const [segment, ...others] = segmentFiles(dataDir, connection.id).reverse();
    expect(others).toEqual([]); // the snapshot covers the old segment, which is gone
    expect(statSync(segment!).size).toBe(0);

    appendFileSync(segment!, 'not a frame\n');
    const second = await startService({ dataDir, env });
    expect(second.output).toContain(`cut the torn tail of ${segment} at offset 0: dropped 12 bytes`);
    const after = batchOfJobs(connection.id, 'snap-after', 8);
    expect((await ingest(second.baseUrl, connection.apiKey, after)).body.accepted).toBe(8);
    await second.kill();

    const newest = segmentFiles(dataDir, connection.id).at(-1)!;
    const intactBytes = statSync(newest).size;
    appendFileSync(newest, new Uint8Array([0x4a, 0x57, 0x4c])); // the start of a frame magic, cut short
    const { ids, output } = await externalIdsAfterRestart(dataDir, cookie);
    expect(output).toContain(`cut the torn tail of ${newest} at offset ${intactBytes}: dropped 3 bytes`);
    expect(ids).toEqual(new Set([...before, ...after].map((event) => event.job.externalId)));
  }, TEST_TIMEOUT_MS);
});

describe('damage in the middle of a segment', () => {
  test('a flipped byte with intact frames after it: start-up is refused with what to do, nothing on disk changes', async () => {
    const { dataDir, connection, cookie, batches, segment } = await prepareKilledDataDir('middle');
    const original = readFileSync(segment);
    const frames = frameLayout(original);
    // the ingest batches are the last BATCHES frames; damage the one of batch 2 (three intact frames follow)
    const damagedBatch = 2;
    const damagedIndex = frames.length - BATCHES + damagedBatch;
    const damaged = frames[damagedIndex]!;
    const corrupt = Uint8Array.from(original);
    const at = damaged.offset + FRAME_HEADER_BYTES + Math.floor((damaged.bytes - FRAME_HEADER_BYTES) / 2);
    corrupt[at] = corrupt[at]! ^ 0xff;
    writeFileSync(segment, corrupt);

    const refused = spawnService({ dataDir, env });
    const exitCode = await refused.waitForExit(30_000);
    const output = refused.output;
    expect(exitCode).not.toBe(0);
    expect(output).not.toContain('listening on');
    expect(output).toContain(`refusing to start from data directory ${dataDir}`);
    expect(output).toContain(`log segment ${segment} is damaged: checksum mismatch at offset ${damaged.offset}`);
    expect(output).toContain('intact records follow the damage');
    expect(output).toContain(`To start: restore the file from a backup, or accept losing every record`);
    expect(output).toContain(`truncate -s ${damaged.offset} ${segment}`);
    expect(output).toContain('Nothing in the directory was changed');
    expect(Buffer.compare(readFileSync(segment), Buffer.from(corrupt))).toBe(0);
    expect(segmentFiles(dataDir, connection.id)).toEqual([segment]);
    expect(existsSync(join(dataDir, 'LOCK'))).toBe(false); // the refused process let go of the directory

    // Doing what the message says (cut the file at the damage) lets it start, with the batches before the damage.
    truncateSync(segment, damaged.offset);
    const { ids, output: restarted } = await externalIdsAfterRestart(dataDir, cookie);
    expect(restarted).toMatch(/recovered: snapshot seq 0, \d+ records replayed/);
    expect(ids).toEqual(new Set(batches.slice(0, damagedBatch).flat()));
  }, TEST_TIMEOUT_MS);
});
