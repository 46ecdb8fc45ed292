/**
 * Upgrade by restart: a data directory whose snapshot was written in an older format
 * recovers to the same state the old version held. Format 1 stored jobs as objects
 * (before job columns); formats 1 and 2 kept every dedup key in the connection chunk
 * (format 3 slices them into chunks of their own); formats 1 to 3 joined a chunk's ids
 * as strings, sent errors and stack traces as text per job and extensions as objects, and did not record the job
 * table's sizes (format 4 may send ids as Latin-1 bytes, and texts as codes into the chunk's strings);
 * formats 1 to 7 held no task metrics or markers (format 6 added teams and the audit log,
 * format 7 the controls' state), so a connection restored from them starts them empty
 * (format 4's command outcomes: snapshot-command-trail.test.ts; format 6's controls:
 * snapshot-controls.test.ts); formats 1 to 8 had no column of the column list added since
 * format 4's (runs added by hand, log line counts, the texts beyond extensions: format 9),
 * which read as none; formats 4 to 8 wrote the job columns alike; formats 1 to 9 kept no
 * job relations (format 10's parent and root columns), which read as none.
 */
import { afterEach, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../actors/clock.ts';
import { entryAtMs, entryCode } from '../../actors/connection/job-history.ts';
import type { Engine } from '../../actors/engine.ts';
import { SNAPSHOT_FORMAT_VERSION, type SnapshotChunk } from '../../actors/engine-snapshot.ts';
import { dumpEngine } from '../support/engine-dump.ts';
import { withFormatNineJobs, withFormatSevenJobs } from '../support/older-job-columns.ts';
import { openAt, workload } from '../support/snapshot-workload.ts';
import { T0 } from '../support/test-app.ts';
import { withOwnTeam } from '../support/team-access.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Format 1 kept a history as `[atMs, stateCode, ...]` pairs. */
const historyAsPairs = (history: readonly number[]): number[] => history.flatMap((entry) => [entryAtMs(entry), entryCode(entry)]);

const asString = (joined: string | Uint8Array): string => (typeof joined === 'string' ? joined : Buffer.from(joined).toString('latin1'));

/** A column of codes into `strings` (-1: null) as the texts themselves. */
const asTexts = (codes: Uint8Array | Array<string | null>, strings: string[]): Array<string | null> =>
  Array.isArray(codes) ? codes : Array.from(new Int32Array(Uint8Array.from(codes).buffer), (code) => (code === -1 ? null : strings[code]!));

/** Columns and texts format 9 added (job-column-list.ts): a job restored from an older format has none of them. */
const SINCE_FORMAT_9 = ['manualRetries', 'logLines', 'args', 'result', 'progressData', 'logs', 'attempts'] as const;

/**
 * The chunks format 8 wrote (task metrics and markers, job columns as format 4's), format 7
 * (the controls' state, teams and the audit log, but no task metrics and no markers), or
 * format 6 (neither the controls' commands nor the agents' capabilities).
 */
function formatEightToSix(engine: Engine, version: 6 | 7 | 8): SnapshotChunk[] {
  const chunks = [...engine.takeSnapshot().chunks].map((chunk) => withFormatSevenJobs(chunk, version));
  expect(chunks.some((chunk) => chunk.k === 'taskMetrics')).toBe(true);
  if (version === 8) return chunks;
  return chunks
    .filter((chunk) => chunk.k !== 'taskMetrics')
    .map((chunk): SnapshotChunk => {
      if (chunk.k !== 'connection') return chunk;
      const { markers, controlOutcomes, capabilities, ...withoutMarkers } = chunk;
      expect(markers).toBeUndefined(); // the workload adds none: there is nothing format 7 would lose here
      if (version === 7) return { ...withoutMarkers, controlOutcomes, capabilities };
      // the workload sends no controls: format 6 loses nothing of them here either
      expect([controlOutcomes, capabilities]).toEqual([[], []]);
      return withoutMarkers;
    });
}

/** Chunks as format 3 wrote them: ids joined as strings, errors and stack traces as text, extensions as objects, no job table sizes. */
function formatThree(chunk: SnapshotChunk): SnapshotChunk {
  if (chunk.k === 'header') return { ...chunk, version: 3 };
  if (chunk.k === 'jobColumns') {
    const columns = chunk.columns;
    return {
      ...chunk,
      columns: {
        ...columns,
        ids: asString(columns.ids),
        externalIds: asString(columns.externalIds),
        error: asTexts(columns.error, columns.strings),
        stacktrace: asTexts(columns.stacktrace, columns.strings),
        extensions: columns.extensions!.map((extensions) => (typeof extensions === 'string' ? (JSON.parse(extensions) as Record<string, unknown>) : extensions)),
      },
    };
  }
  if (chunk.k !== 'connection') return chunk;
  const { jobTable, ...withoutSizes } = chunk;
  expect(jobTable?.rows).toBeGreaterThan(0);
  return withoutSizes;
}

/** A dump without what a format before 9 could not hold: those fields of each job, and the bytes they counted. */
function asOlderFormatHeld(dump: ReturnType<typeof dumpEngine>, version: number): ReturnType<typeof dumpEngine> {
  const dropped: string[] = version < 9 ? [...SINCE_FORMAT_9] : [];
  const connections = Object.fromEntries(
    Object.entries(dump.connections).map(([id, connection]) => {
      const { jobs, retainedBytes: _bytes, ...rest } = connection as { jobs: Array<Record<string, unknown>>; retainedBytes: number };
      return [id, { ...rest, jobs: jobs.map((job) => Object.fromEntries(Object.entries(job).filter(([key]) => !dropped.includes(key)))) }];
    }),
  );
  return { ...dump, connections };
}

/** The chunks formats 1 to 9 wrote: format 2 also every dedup key in the connection chunk; format 1 also jobs as plain objects, 1,000 a chunk. */
function* olderFormatChunks(engine: Engine, version: 1 | 2 | 3 | 6 | 7 | 8 | 9): Generator<unknown> {
  if (version === 9) {
    yield* [...engine.takeSnapshot().chunks].map(withFormatNineJobs);
    return;
  }
  if (version >= 6) {
    yield* formatEightToSix(engine, version as 6 | 7 | 8);
    return;
  }
  const chunks = formatEightToSix(engine, 6).map(formatThree);
  if (version === 3) {
    expect(chunks.some((chunk) => chunk.k === 'jobColumns' && typeof chunk.columns.ids === 'string')).toBe(true);
    expect(chunks.some((chunk) => chunk.k === 'jobColumns' && Array.isArray(chunk.columns.error) && chunk.columns.error.some((text) => text !== null))).toBe(true);
    yield* chunks;
    return;
  }
  const dedupKeysOf = (connectionId: string): string[] =>
    chunks.flatMap((chunk) => (chunk.k === 'dedupKeys' && chunk.connectionId === connectionId ? chunk.keys : []));
  for (const chunk of chunks) {
    if (chunk.k === 'header') yield { ...chunk, version };
    else if (chunk.k === 'dedupKeys') continue;
    else if (chunk.k === 'connection') yield { ...chunk, dedupKeys: dedupKeysOf(chunk.id) };
    else if (chunk.k === 'jobColumns' && version === 1) continue;
    else if (chunk.k === 'end' && version === 1) {
      for (const connectionId of engine.connectionIds()) {
        // format 1's job: extensions as an object, none of the fields added since
        const jobs = [...engine.connection(connectionId)!.jobs.values()].map(({ parentExternalId: _parent, rootExternalId: _root, manualRetries: _manual, logLines: _lines, args: _args, result: _result, progressData: _data, logs: _logs, attempts: _attempts, state: _state, ...job }) => ({
          ...job,
          extensions: job.extensions === null ? null : (JSON.parse(job.extensions) as Record<string, unknown>),
          history: historyAsPairs(job.history),
        }));
        for (let start = 0; start < jobs.length; start += 1000) yield { k: 'jobs', connectionId, jobs: jobs.slice(start, start + 1000) };
      }
      yield chunk;
    } else yield chunk satisfies SnapshotChunk;
  }
}

for (const version of [1, 2, 3, 6, 7, 8, 9] as const) {
  test(`given a snapshot in format ${version}, then recovery restores the state it was taken from (dedup keys included; task metrics, if it did not hold them, start empty), and the next snapshot is the current format`, async () => {
    const dir = mkdtempSync(join(tmpdir(), `jw-format${version}-`));
    dirs.push(dir);
    const clock = new ManualClock(T0);
    const live = await openAt(dir, clock);
    const admin = await live.accounts.addUser('admin@example.com', 'a long password!', true);
    const { connection, apiKey } = await live.connections.create(await withOwnTeam(live.engine, admin), 'prod', undefined);
    const other = await live.connections.create(await withOwnTeam(live.engine, admin), 'other', undefined);
    // formats before 10 kept no relations: the state written holds none
    await workload(live, apiKey, connection.id, 1, { relations: false });
    await workload(live, other.apiKey, other.connection.id, 2, { relations: false });
    await live.store.writeSnapshot({ chunks: olderFormatChunks(live.engine, version) });
    const expected = asOlderFormatHeld(dumpEngine(live.engine, clock.nowMs()), version);
    const noTaskMetrics = { tasks: [], queues: [], otherTasks: null, otherQueues: null };
    for (const dump of Object.values(expected.connections) as Array<{ taskMetrics: unknown }>) {
      expect(dump.taskMetrics).not.toEqual(noTaskMetrics);
      if (version < 8) dump.taskMetrics = noTaskMetrics;
    }
    expect((expected.connections[connection.id] as { dedup: string[] }).dedup.length).toBeGreaterThan(0);
    await live.store.close();

    const upgraded = await openAt(dir, clock);
    expect(upgraded.report.snapshotSeq).toBeGreaterThan(0);
    expect(upgraded.report.recordsReplayed).toBe(0);
    expect(asOlderFormatHeld(dumpEngine(upgraded.engine, clock.nowMs()), version)).toEqual(expected);
    const kinds = [...upgraded.engine.takeSnapshot().chunks].map((chunk) => (chunk.k === 'header' ? `header ${chunk.version}` : chunk.k));
    expect(kinds).toContain(`header ${SNAPSHOT_FORMAT_VERSION}`);
    expect(kinds).toContain('jobColumns');
    expect(kinds).toContain('dedupKeys');
    expect(kinds).not.toContain('jobs');
    await upgraded.store.close();
  });
}
