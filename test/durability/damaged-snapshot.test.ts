/**
 * A data directory whose snapshot or log holds content of the wrong shape under valid
 * checksums, opened as the service and the CLI open it (src/open-engine.ts): every case
 * stops the start naming the file, the frame's offset and what was expected, and never
 * comes up as a new installation (a chunk replaced by `{}` once lost every account and got
 * a fresh admin). A directory whose accounts were emptied, or whose newest segment was
 * deleted, is refused the same way.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SnapshotChunk } from '../../actors/engine-snapshot.ts';
import { AccountService } from '../../actors/services/account-service.ts';
import { ConnectionService } from '../../actors/services/connection-service.ts';
import { ingestEvents } from '../../actors/services/ingest-service.ts';
import { MANIFEST_FILE } from '../../persistence/data-dir-manifest.ts';
import { RecoveryRefusedError } from '../../persistence/errors.ts';
import { segmentFileName, snapshotFileName } from '../../persistence/file-names.ts';
import { LOG_MAGIC, SNAPSHOT_MAGIC, encodeFrame, readFrame } from '../../persistence/frame.ts';
import { decodeValue, encodeValue } from '../../persistence/record-codec.ts';
import { loadConfig } from '../../src/config.ts';
import { openEngine } from '../../src/open-engine.ts';
import { jobEvent } from '../support/events.ts';
import { withOwnTeam } from '../support/team-access.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const quiet = () => undefined;

/** Two users, a connection with jobs, a snapshot at seq `snapshotSeq`, and one more user after it. */
async function dataDir(): Promise<{ dir: string; logDir: string; snapshot: string; snapshotSeq: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-damaged-'));
  dirs.push(dir);
  const config = loadConfig({ DATA_DIR: dir });
  const opened = await openEngine(config, { log: quiet });
  const accounts = new AccountService(opened.engine, config.sessionTtlMs, opened.sessionSecret);
  const owner = await accounts.addUser('ops@example.com', 'long enough pw', true);
  await accounts.addUser('dev@example.com', 'long enough pw', false);
  const { connection, apiKey } = await new ConnectionService(opened.engine).create(await withOwnTeam(opened.engine, owner), 'prod', undefined);
  await ingestEvents(opened.engine, apiKey, [jobEvent(connection.id, Date.now(), { externalId: 'a' }), jobEvent(connection.id, Date.now(), { externalId: 'b' })]);
  const taken = opened.engine.takeSnapshot();
  const { seq } = await opened.store.writeSnapshot(taken).finally(() => taken.release());
  await accounts.addUser('later@example.com', 'long enough pw', false);
  await opened.close();
  const logDir = join(dir, 'log');
  return { dir, logDir, snapshot: join(logDir, snapshotFileName(seq)), snapshotSeq: seq };
}

async function refusal(dir: string): Promise<RecoveryRefusedError> {
  const error = await openEngine(loadConfig({ DATA_DIR: dir }), { log: quiet }).then(
    async (opened) => {
      await opened.close();
      return new Error('it started');
    },
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RecoveryRefusedError);
  return error as RecoveryRefusedError;
}

interface Frame {
  start: number;
  end: number;
  value: unknown;
}

function framesOf(path: string, magic: number): Frame[] {
  const bytes = readFileSync(path);
  const frames: Frame[] = [];
  for (let offset = 0; offset < bytes.length; ) {
    const outcome = readFrame(bytes, offset, magic);
    if (outcome.kind !== 'ok') throw new Error(`not a clean file at ${offset}`);
    frames.push({ start: offset, end: outcome.nextOffset, value: decodeValue(outcome.payload) });
    offset = outcome.nextOffset;
  }
  return frames;
}

/** Rewrites the snapshot's chunks (frames between the file's header and trailer) with valid checksums and frame numbers. */
function rewriteChunks(path: string, edit: (chunks: unknown[]) => unknown[]): void {
  const frames = framesOf(path, SNAPSHOT_MAGIC);
  const header = frames[0]!.value;
  const trailer = frames.at(-1)!.value as { chunkCount: number };
  const chunks = edit(frames.slice(1, -1).map((frame) => frame.value));
  const values = [header, ...chunks, { ...trailer, chunkCount: chunks.length }];
  writeFileSync(path, Buffer.concat(values.map((value, index) => encodeFrame(SNAPSHOT_MAGIC, index, encodeValue(value)))));
}

const kindOf = (chunk: unknown): string => (chunk as SnapshotChunk).k;

describe('a damaged snapshot stops the start, never starting as a new installation', () => {
  test('undamaged, it starts with every account (the control)', async () => {
    const { dir } = await dataDir();
    const opened = await openEngine(loadConfig({ DATA_DIR: dir }), { log: quiet });
    expect([...opened.engine.accounts.users.values()].map((user) => user.email).sort()).toEqual(['dev@example.com', 'later@example.com', 'ops@example.com']);
    await opened.close();
  });

  test('the accounts chunk replaced by {} under a valid checksum: refused, naming the file, the chunk, its offset and what was expected', async () => {
    const { dir, logDir, snapshot } = await dataDir();
    rewriteChunks(snapshot, (chunks) => chunks.map((chunk) => (kindOf(chunk) === 'accounts' ? {} : chunk)));
    const accountsFrame = framesOf(snapshot, SNAPSHOT_MAGIC)[2]!;
    const before = readdirSync(logDir).sort();
    const error = await refusal(dir);
    expect(error.message).toStartWith(
      `refusing to start from data directory ${logDir}: snapshot ${snapshot} chunk 2 of ${framesOf(snapshot, SNAPSHOT_MAGIC).length - 2} (frame at offset ${accountsFrame.start}): ` +
        'expected a snapshot chunk kind this version knows (header, accounts, audit, connection, taskMetrics, dedupKeys, jobs, jobColumns, end), found nothing. To start:',
    );
    expect(readdirSync(logDir).sort()).toEqual(before);
  });

  test('a chunk whose fields have the wrong type names the field', async () => {
    const { dir, snapshot } = await dataDir();
    rewriteChunks(snapshot, (chunks) => chunks.map((chunk) => (kindOf(chunk) === 'accounts' ? { k: 'accounts', data: { users: 'everyone', sessions: [], connections: [] } } : chunk)));
    expect((await refusal(dir)).message).toContain(": a 'accounts' chunk at /data/users: expected array, found \"everyone\".");
    const other = await dataDir();
    rewriteChunks(other.snapshot, (chunks) => chunks.map((chunk) => (kindOf(chunk) === 'connection' ? { ...(chunk as object), quota: { day: 'today', used: 0 } } : chunk)));
    expect((await refusal(other.dir)).message).toContain("a 'connection' chunk at /quota/day: expected number, found \"today\"");
  });

  test("a job columns chunk's text column of the wrong type names it, as the column list declares it", async () => {
    const { dir, snapshot } = await dataDir();
    let edited = 0;
    rewriteChunks(snapshot, (chunks) =>
      chunks.map((chunk) => {
        if (kindOf(chunk) !== 'jobColumns') return chunk;
        edited++;
        const columns = (chunk as { columns: { texts: Record<string, unknown> } }).columns;
        return { ...(chunk as object), columns: { ...columns, texts: { ...columns.texts, args: { bytes: new Uint8Array(0), lengths: 'none' } } } };
      }),
    );
    expect(edited).toBeGreaterThan(0);
    expect((await refusal(dir)).message).toContain("a 'jobColumns' chunk at /columns/texts/args/lengths: expected");
  });

  test('a chunk that went missing is refused by the order: a snapshot opens with its header, ends with its end, and holds the accounts', async () => {
    const cases: Array<[string, (chunks: unknown[]) => unknown[], string]> = [
      ['the header', (chunks) => chunks.filter((chunk) => kindOf(chunk) !== 'header'), "expected the header chunk first, found a 'accounts' chunk"],
      ['the end', (chunks) => chunks.filter((chunk) => kindOf(chunk) !== 'end'), "expected the snapshot to close with its 'end' chunk, but its chunks ran out before it"],
      ['the accounts', (chunks) => chunks.filter((chunk) => kindOf(chunk) !== 'accounts'), "expected an 'accounts' chunk in a snapshot of the whole state, found none"],
    ];
    for (const [missing, edit, expected] of cases) {
      const { dir, snapshot } = await dataDir();
      rewriteChunks(snapshot, edit);
      const message = (await refusal(dir)).message;
      expect(message, `without ${missing}`).toContain(expected);
      expect(message).toContain(`snapshot ${snapshot}`);
    }
    // three data directories, each with password hashes and a snapshot: past bun's 5 s on a loaded machine
  }, 30_000);

  test('a chunk msgpack cannot read names msgpack\'s reason, with the file and offset', async () => {
    const { dir, snapshot } = await dataDir();
    const frames = framesOf(snapshot, SNAPSHOT_MAGIC);
    const bytes = readFileSync(snapshot);
    writeFileSync(snapshot, Buffer.concat([bytes.subarray(0, frames[3]!.start), encodeFrame(SNAPSHOT_MAGIC, 3, Uint8Array.of(0x01, 0x02)), bytes.subarray(frames[3]!.end)]));
    expect((await refusal(dir)).message).toContain(`snapshot ${snapshot} chunk 3 of ${frames.length - 2} (frame at offset ${frames[3]!.start}): it could not be read (Data read, but end of buffer not reached`);
  });

  test('accounts emptied with a valid shape: the directory held accounts, so it is refused and no admin is made', async () => {
    const { dir, snapshot, logDir } = await dataDir();
    rewriteChunks(snapshot, (chunks) => chunks.map((chunk) => (kindOf(chunk) === 'accounts' ? { k: 'accounts', data: { users: [], sessions: [], connections: [] } } : chunk)));
    // the user added after the snapshot is in the log: take it too, so recovery finds no user at all
    for (const name of readdirSync(logDir)) if (name.endsWith('.seg')) writeFileSync(join(logDir, name), '');
    const error = await refusal(dir);
    expect(error.message).toBe(
      `refusing to start from data directory ${dir}: it held accounts (its manifest.json is marked 'accounts'), but recovery found no user: ` +
        'the snapshot or log segments that held them are gone or were emptied. To start: restore the data directory from a backup ' +
        '(`npm run cli -- verify` says what it holds); to start over as a new installation, move the whole directory aside. No admin was created.',
    );
  });
});

describe('a damaged log record stops the start', () => {
  const cases: Array<[string, unknown, string]> = [
    ['null', null, "expected a record (an object with a type 't'), found null"],
    ['an unknown type', { t: 'user.renamed', userId: 'x' }, 'expected a record type this version knows (user.created, '],
    ['a field of the wrong type', { t: 'user.created', user: { id: 1, email: 'x@example.com', passwordHash: 'h', isAdmin: false, createdAtMs: 1 } }, "a 'user.created' record at /user/id: expected string, found number 1"],
    ['an event of the wrong shape', { t: 'ingest', connectionId: 'c', receivedAtMs: 1, events: [{ kind: 'job', atMs: 1, framework: 'celery', externalId: 'x', name: 'n', state: 'exploded' }] }, "an 'ingest' record's event 0: a job event at /state: expected one of \"unknown\", \"queued\""],
  ];
  for (const [what, record, expected] of cases) {
    test(`${what}: names the segment, the seq, the offset and what was expected`, async () => {
      const { dir, logDir, snapshotSeq } = await dataDir();
      const segment = join(logDir, segmentFileName(snapshotSeq + 1));
      const offset = readFileSync(segment).length;
      appendFileSync(segment, encodeFrame(LOG_MAGIC, snapshotSeq + 2, encodeValue(record)));
      const message = (await refusal(dir)).message;
      expect(message).toStartWith(`refusing to start from data directory ${logDir}: log segment ${segment} record seq ${snapshotSeq + 2} (frame at offset ${offset}): ${expected}`);
      expect(message).toContain(`cut the file at the record (truncate -s ${offset} ${segment})`);
    });
  }
});

test('deleting the newest log segment is named at start: its records were acknowledged', async () => {
  const { dir, logDir, snapshotSeq } = await dataDir();
  const newest = join(logDir, segmentFileName(snapshotSeq + 1));
  unlinkSync(newest);
  const message = (await refusal(dir)).message;
  expect(message).toContain(`the newest log segment ${newest} is missing: ${join(logDir, MANIFEST_FILE)} names it`);
});
