import { describe, expect, test } from 'bun:test';
import { readJobColumns, toJobColumns, type JobColumns } from '../../actors/connection/job-columns.ts';
import { lastHistoryState, packHistoryEntry } from '../../actors/connection/job-history.ts';
import type { Job } from '../../actors/connection/job-record.ts';
import { JobTable } from '../../actors/connection/job-table.ts';
import { decodeValue, encodeValue } from '../../persistence/record-codec.ts';

/** A job whose state is its history's last, as in the store. */
function job(overrides: Partial<Job>): Job {
  const made: Job = {
    id: '0190a1b2-0000-7000-8000-000000000001',
    connectionId: 'c1',
    externalId: 'task-1',
    framework: 'celery',
    name: 'tasks.add',
    queue: null,
    state: 'unknown',
    createdAtMs: 1_700_000_000_000,
    createdAtReported: false,
    startedAtMs: null,
    completedAtMs: null,
    workerId: null,
    error: null,
    stacktrace: null,
    extensions: null,
    args: null,
    result: null,
    progressData: null,
    logs: null,
    logLines: 0,
    attempts: null,
    attempt: 1,
    maxRetries: null,
    progress: null,
    history: [packHistoryEntry(1_700_000_000_000, 1)],
    lastEventMs: 1_700_000_000_000,
    parentExternalId: null,
    rootExternalId: null,
    manualRetries: 0,
    ...overrides,
  };
  made.state = lastHistoryState(made.history);
  return made;
}

/** The columns loaded as rows of a job table, and the rows read back. */
function loaded(columns: JobColumns, table = new JobTable('c1')): Job[] {
  const typed = readJobColumns(columns);
  const first = table.load(typed);
  return Array.from({ length: typed.count }, (_, at) => table.read(first + at));
}

const throughBytes = (jobs: Job[]): Job[] => loaded(decodeValue(encodeValue(toJobColumns(jobs))) as JobColumns);

describe('job columns', () => {
  test('given jobs with every field set and every nullable field null, then they come back equal through msgpack, in order', () => {
    const jobs = [
      job({}),
      job({
        id: '0190a1b2-0000-7000-8000-000000000002',
        externalId: 'ünïcode-😀-id',
        framework: 'bullmq',
        name: 'emails.send',
        queue: 'mail',
        createdAtMs: 1_700_000_000_123.5,
        createdAtReported: true,
        startedAtMs: 1_700_000_001_000,
        completedAtMs: 1_700_000_002_000,
        workerId: 'worker-7',
        error: 'boom',
        stacktrace: 'Traceback\n  line 1',
        extensions: JSON.stringify({ eta: 'soon', tags: ['a', 1] }),
        args: JSON.stringify({ kwargs: { invoice: 'INV-7', name: 'Jürgen 😀' } }),
        result: '42',
        progressData: JSON.stringify({ percent: 25 }),
        logs: JSON.stringify(['started', 'ünïcode line']),
        logLines: 2,
        attempts: JSON.stringify([{ attempt: 2, state: 'failed', startedAtMs: 1, finishedAtMs: 2, workerId: 'w', error: 'e', stacktrace: null }]),
        attempt: 3,
        maxRetries: 0,
        progress: 0.25,
        history: [packHistoryEntry(1_700_000_000_000, 1), packHistoryEntry(1_700_000_001_000, 3), packHistoryEntry(1_700_000_002_000, 5)],
        lastEventMs: 1_700_000_002_000,
        parentExternalId: 'mail:parent-1',
        rootExternalId: 'mail:root-😀',
        manualRetries: 2,
      }),
      job({ id: 'u', externalId: 'only-parent', parentExternalId: 'mail:parent-1' }),
      job({ id: 'x', externalId: '', queue: 'mail', workerId: 'worker-7', name: 'emails.send', history: [packHistoryEntry(-5, 3)] }),
      job({ id: 'y', externalId: 'only-extensions', extensions: '{"a":1}' }),
      job({ id: 'z', externalId: 'only-stacktrace', stacktrace: 'trace' }),
      job({ id: 'w', externalId: 'only-error', error: 'e' }),
      job({ id: 'v', externalId: 'only-args', args: '[1,"two",null]' }),
    ];
    expect(throughBytes(jobs)).toEqual(jobs);
    expect(throughBytes([])).toEqual([]);
  });

  test('given a chunk written before relations were kept (format 9 and older), then its jobs load without parent or root', () => {
    const columns = toJobColumns([job({ parentExternalId: 'p', rootExternalId: 'r' })]);
    const older = columns as Partial<JobColumns>;
    delete older.parentExternalId;
    delete older.rootExternalId;
    const [restored] = loaded(decodeValue(encodeValue(columns)) as JobColumns);
    expect([restored!.parentExternalId, restored!.rootExternalId]).toEqual([null, null]);
  });

  test('given a relation column of the wrong length, then reading it fails with a clear error', () => {
    const columns = toJobColumns([job({}), job({ id: 'b', externalId: 'task-2' })]);
    columns.parentExternalId = columns.parentExternalId!.subarray(4);
    expect(() => readJobColumns(columns)).toThrow('do not agree on 2 jobs');
  });

  test('given a job changed after its columns were taken, then the columns still hold it as it was', () => {
    const original = job({ history: [packHistoryEntry(1, 1)] });
    const columns = toJobColumns([original]);
    original.history.push(packHistoryEntry(2, 3));
    original.name = 'changed';
    const [restored] = loaded(columns);
    expect(restored!.history).toEqual([packHistoryEntry(1, 1)]);
    expect(restored!.name).toBe('tasks.add');
  });

  test('given repeated strings, then the table holds each once, and chunks loaded one after another append rows', () => {
    const table = new JobTable('c1');
    loaded(toJobColumns([job({ queue: 'mail' }), job({ queue: 'mail' })]), table);
    expect(table.distinctStrings).toBe(3); // celery, tasks.add, mail
    // the second chunk's rows, history included, land after the first's
    const later = job({ id: 'b', externalId: 'task-2', workerId: 'w1', history: [packHistoryEntry(1_700_000_000_000, 1), packHistoryEntry(1_700_000_000_500, 3)] });
    const second = loaded(toJobColumns([later]), table);
    expect(second).toEqual([later]);
    expect([table.size, table.distinctStrings]).toEqual([3, 4]);
  });

  test('given Latin-1 ids, then they travel as bytes; a wider character makes that column text; a shared error or trace is one string of the chunk', () => {
    const trace = 'Traceback (most recent call last):\n  File "tasks.py", line 1';
    const failed = { error: 'boom', stacktrace: trace };
    const columns = toJobColumns([
      job({ externalId: 'caf\u00e9', ...failed }),
      job({ id: '0190a1b2-0000-7000-8000-000000000002', externalId: 'task-2', ...failed }),
    ]);
    expect(columns.ids).toBeInstanceOf(Uint8Array);
    expect(columns.externalIds).toBeInstanceOf(Uint8Array);
    expect(columns.strings.filter((value) => value === trace)).toHaveLength(1);
    expect(typeof toJobColumns([job({ externalId: 'ünïcode-😀-id' })]).externalIds).toBe('string');
    expect(loaded(columns).map((read) => [read.externalId, read.error, read.stacktrace])).toEqual([
      ['caf\u00e9', 'boom', trace],
      ['task-2', 'boom', trace],
    ]);
  });

  test('given a job without history, then loading it fails with a clear error', () => {
    expect(() => loaded(toJobColumns([job({ history: [] })]))).toThrow('has no history');
  });

  test('given columns that disagree on the number of jobs, then reading them fails with a clear error', () => {
    const columns = toJobColumns([job({}), job({})]);
    expect(() => readJobColumns({ ...columns, count: 3 })).toThrow('do not agree on 3 jobs');
    expect(() => readJobColumns({ ...columns, createdAtMs: new Uint8Array(7) })).toThrow('not whole 8-byte numbers');
    expect(() => readJobColumns({ ...columns, texts: { ...columns.texts, args: { ...columns.texts.args, bytes: new Uint8Array(3) } } })).toThrow('do not agree on 2 jobs');
  });

  test('given texts holding a 0 byte (not a JSON text), then loading them fails with a clear error', () => {
    const columns = toJobColumns([job({ args: '"a"' })]);
    const bytes = Uint8Array.from(columns.texts.args.bytes);
    bytes[1] = 0;
    expect(() => loaded({ ...columns, texts: { ...columns.texts, args: { ...columns.texts.args, bytes } } })).toThrow('hold a 0 byte');
  });

  test('given many jobs with large texts, then each comes back whole, in order', () => {
    const jobs = Array.from({ length: 50 }, (_, i) =>
      job({ id: `id-${String(i).padStart(3, '0')}`, externalId: `e${i}`, args: JSON.stringify({ i, blob: 'x'.repeat(i * 997) }), logs: i % 3 === 0 ? null : JSON.stringify([`line ${i}`]), logLines: i % 3 === 0 ? 0 : 1 }),
    );
    expect(throughBytes(jobs)).toEqual(jobs);
  });
});
