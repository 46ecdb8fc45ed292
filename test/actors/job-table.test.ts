import { describe, expect, test } from 'bun:test';
import { CodeTable, NO_CODE } from '../../actors/connection/code-table.ts';
import { HistoryColumn } from '../../actors/connection/history-column.ts';
import { collapseHistory, currentRunStartMs, entryAtMs, HISTORY_ENTRIES_MAX, lastHistoryState, packHistoryEntry, stateCodeOf } from '../../actors/connection/job-history.ts';
import type { Job } from '../../actors/connection/job-record.ts';
import { JobTable } from '../../actors/connection/job-table.ts';
import { StringColumn } from '../../actors/connection/string-column.ts';
import { outcomeOf, withAttempt, withLateFacts } from '../../actors/connection/attempt-history.ts';
import { JOB_OVERHEAD_BYTES, HISTORY_ENTRY_BYTES } from '../../actors/ingest/event-bytes.ts';
import { appendedLog } from '../../actors/ingest/job-payload.ts';
import { JSON_OBJECT_BYTES_MAX } from '../../actors/ingest/json-object-limits.ts';
import type { JobEvent } from '../../actors/ingest/normalized-event.ts';
import { SeededRandom } from '../../persistence/seeded-random.ts';

const T = 1_763_900_000_000;

const event = (fields: Partial<JobEvent> = {}): JobEvent => ({ kind: 'job', atMs: T, framework: 'celery', externalId: 'e1', name: 'tasks.a', state: 'queued', ...fields });

/** Where an entry goes among `entries` (sorted by time, ties in arrival order): after every entry of the same time. */
function referenceInsert(entries: number[], atMs: number, code: number): void {
  const entry = packHistoryEntry(atMs, code);
  let index = entries.length;
  while (index > 0 && entryAtMs(entries[index - 1]!) > atMs) index--;
  entries.splice(index, 0, entry);
  if (entries.length > HISTORY_ENTRIES_MAX) entries.shift();
}

describe('the history column', () => {
  test('given entries out of order and ties, then a row keeps them in time order, ties in arrival order', () => {
    const column = new HistoryColumn();
    column.ensureRows(1);
    const inserts: Array<[number, string]> = [[T + 20, 'active'], [T, 'queued'], [T + 20, 'retrying'], [T + 30, 'completed'], [T + 25, 'active']];
    for (const [atMs, state] of inserts) column.insert(0, atMs, stateCodeOf(state as 'queued'));
    expect(column.length(0)).toBe(5);
    expect(collapseHistory(column.view(0))).toEqual([
      { state: 'queued', atMs: T },
      { state: 'active', atMs: T + 20 },
      { state: 'retrying', atMs: T + 20 },
      { state: 'active', atMs: T + 25 },
      { state: 'completed', atMs: T + 30 },
    ]);
    expect(lastHistoryState(column.view(0))).toBe('completed');
    expect(column.last(0)).toBe(packHistoryEntry(T + 30, stateCodeOf('completed')));
  });

  test('given more entries than kept, then the oldest go and the newest stay in order', () => {
    const column = new HistoryColumn();
    column.ensureRows(2);
    for (let i = 0; i < HISTORY_ENTRIES_MAX + 5; i++) column.insert(1, T + i, 1 + (i % 3));
    expect(column.length(1)).toBe(HISTORY_ENTRIES_MAX);
    expect(entryAtMs(column.view(1)[0]!)).toBe(T + 5);
    expect(entryAtMs(column.last(1))).toBe(T + HISTORY_ENTRIES_MAX + 4);
    expect(column.length(0)).toBe(0);
  });

  test('given many rows growing in turn, then each row holds exactly its entries through moves and compactions, and the column stays bounded', () => {
    for (const seed of [1, 2, 3]) {
      const random = new SeededRandom(seed);
      const column = new HistoryColumn();
      const reference: number[][] = [];
      let rows = 0;
      for (let step = 0; step < 20_000; step++) {
        if (rows === 0 || random.next() < 0.05) {
          column.ensureRows(++rows);
          reference.push([]);
        }
        const row = random.int(rows);
        if (random.next() < 0.02) {
          column.clear(row);
          reference[row] = [];
          continue;
        }
        const atMs = T + random.int(50);
        const code = random.int(8);
        column.insert(row, atMs, code);
        referenceInsert(reference[row]!, atMs, code);
      }
      for (let row = 0; row < rows; row++) expect(Array.from(column.view(row))).toEqual(reference[row]!);
      const held = reference.reduce((sum, entries) => sum + entries.length, 0);
      // room for each row's slot (under twice its entries, or 4) at most twice over, plus the first column
      expect(column.allocatedEntries).toBeLessThanOrEqual(Math.max(1024, 2 * 2 * (2 * held + 4 * rows)));
    }
  });

  test('given a snapshot column of rows loaded after rows in use, then all read back and later inserts go to the right row', () => {
    const column = new HistoryColumn();
    column.ensureRows(1);
    column.insert(0, T, 1);
    column.load(1, [2, 0, 1], Float64Array.of(packHistoryEntry(T, 1), packHistoryEntry(T + 1, 3), packHistoryEntry(T + 2, 4)));
    expect([0, 1, 2, 3].map((row) => Array.from(column.view(row)))).toEqual([
      [packHistoryEntry(T, 1)],
      [packHistoryEntry(T, 1), packHistoryEntry(T + 1, 3)],
      [],
      [packHistoryEntry(T + 2, 4)],
    ]);
    column.insert(1, T + 5, 4);
    column.insert(2, T + 6, 5);
    expect(Array.from(column.view(1))).toEqual([packHistoryEntry(T, 1), packHistoryEntry(T + 1, 3), packHistoryEntry(T + 5, 4)]);
    expect(Array.from(column.view(2))).toEqual([packHistoryEntry(T + 6, 5)]);
    expect(Array.from(column.view(3))).toEqual([packHistoryEntry(T + 2, 4)]);
    expect(() => column.load(4, [HISTORY_ENTRIES_MAX + 1], new Float64Array(HISTORY_ENTRIES_MAX + 1))).toThrow('over the 200 kept');
    column.load(4, [HISTORY_ENTRIES_MAX], new Float64Array(HISTORY_ENTRIES_MAX));
    expect(column.length(4)).toBe(HISTORY_ENTRIES_MAX);
  });
});

describe('the code table', () => {
  test('given a string held by several rows, then it has one code until its last holder lets go, and the code is reused', () => {
    const codes = new CodeTable();
    expect(codes.acquire(null)).toBe(NO_CODE);
    const mail = codes.acquire('mail');
    expect(codes.acquire('mail')).toBe(mail);
    const reports = codes.acquire('reports');
    expect(reports).not.toBe(mail);
    expect(codes.size).toBe(2);
    codes.release(mail);
    expect(codes.stringOf(mail)).toBe('mail');
    codes.release(mail);
    codes.release(NO_CODE);
    expect(codes.size).toBe(1);
    expect(codes.acquire('media')).toBe(mail); // the freed code, taken again
    expect([codes.stringOf(mail), codes.stringOf(reports), codes.stringOf(NO_CODE)]).toEqual(['media', 'reports', null]);
    expect(codes.acquire('mail')).not.toBe(mail);
  });

  test('given more distinct strings than its first size, then every code still names its string', () => {
    const codes = new CodeTable();
    const held = Array.from({ length: 100 }, (_, i) => codes.acquire(`worker-${i}`));
    expect(held.map((code) => codes.stringOf(code))).toEqual(Array.from({ length: 100 }, (_, i) => `worker-${i}`));
    const again = codes.acquire('worker-99');
    codes.release(again);
    expect(codes.stringOf(again)).toBe('worker-99'); // still held once
    for (const code of held) codes.release(code);
    expect(codes.size).toBe(0);
  });
});

describe('the job table', () => {
  test('given a new job, then its row reads as a job created by the event, before the event is merged', () => {
    const table = new JobTable('c1');
    const row = table.create('id-1', event({ state: 'active', atMs: T + 5 }));
    expect(table.read(row)).toEqual({
      id: 'id-1',
      connectionId: 'c1',
      externalId: 'e1',
      framework: 'celery',
      name: 'tasks.a',
      queue: null,
      state: 'active',
      createdAtMs: T + 5,
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
      history: [],
      lastEventMs: Number.NEGATIVE_INFINITY,
      parentExternalId: null,
      rootExternalId: null,
      manualRetries: 0,
    });
  });

  test('given every field merged, then each accessor and the copy agree, and the copy does not follow later changes', () => {
    const table = new JobTable('c1');
    const row = table.create('id-1', event());
    table.merge(row, event());
    const full = event({
      atMs: T + 10,
      state: 'failed',
      queue: 'mail',
      workerId: 'w1',
      attempt: 2,
      maxRetries: 3,
      progress: 0.5,
      error: 'boom',
      stacktrace: 'trace',
      extensions: { eta: 1 },
      createdAtMs: T - 1,
      startedAtMs: T + 2,
      completedAtMs: T + 9,
      framework: 'bullmq',
      name: 'tasks.b',
    });
    expect(table.merge(row, full)).toBe(true);
    const copy = table.read(row);
    expect(copy).toMatchObject({ state: 'failed', queue: 'mail', workerId: 'w1', attempt: 2, maxRetries: 3, progress: 0.5, createdAtMs: T - 1, createdAtReported: true });
    expect([copy.error, copy.stacktrace, copy.extensions]).toEqual(['boom', 'trace', '{"eta":1}']);
    expect([table.stateOf(row), table.queueOf(row), table.workerOf(row), table.nameOf(row), table.frameworkOf(row)]).toEqual(['failed', 'mail', 'w1', 'tasks.b', 'bullmq']);
    expect([table.startedAtMsOf(row), table.completedAtMsOf(row), table.durationMsOf(row), table.lastEventMsOf(row)]).toEqual([T + 2, T + 9, 7, T + 10]);
    expect([table.createdAtMsOf(row), table.createdAtReportedOf(row), table.stateChangedAtMs(row)]).toEqual([T - 1, true, T + 10]);
    // attempt 2 began a new run: the first (queued, nothing else known) is an earlier attempt
    expect(JSON.parse(copy.attempts!)).toEqual([{ attempt: 1, state: 'queued', startedAtMs: null, finishedAtMs: null, workerId: null, error: null, stacktrace: null }]);
    expect(table.bytesOf(row)).toBe(JOB_OVERHEAD_BYTES + 2 + 4 + 5 + JSON.stringify({ eta: 1 }).length + copy.attempts!.length + 2 * HISTORY_ENTRY_BYTES);
    expect(table.merge(row, event({ atMs: T + 1, state: 'active', queue: 'other', error: 'older' }))).toBe(false);
    expect([copy.history.length, copy.queue, copy.state]).toEqual([2, 'mail', 'failed']);
    expect([table.read(row).history.length, table.queueOf(row), table.stateOf(row), table.errorOf(row)]).toEqual([3, 'mail', 'failed', 'boom']);
    // an action's entry: the job's state, while its newest event stays the job system's
    table.addHistory(row, 'queued', T + 20);
    expect([table.stateOf(row), table.lastEventMsOf(row), table.stateChangedAtMs(row)]).toEqual(['queued', T + 10, T + 20]);
    // taken back: the state is the newest entry's again; an entry that is not there is not taken
    expect(table.removeHistory(row, 'queued', T + 21)).toBe(false);
    expect(table.removeHistory(row, 'queued', T + 20)).toBe(true);
    expect([table.stateOf(row), table.stateChangedAtMs(row), table.read(row).history.length]).toEqual(['failed', T + 10, 3]);
  });

  test('given a freed row, then the next job reuses it without anything of the old one, and refs tell the two apart', () => {
    const table = new JobTable('c1');
    const first = table.create('id-1', event({ queue: 'mail', workerId: 'w1', error: 'x' }));
    table.merge(first, event({ queue: 'mail', workerId: 'w1', error: 'x', maxRetries: 2 }));
    const other = table.create('id-2', event({ externalId: 'e2' }));
    table.merge(other, event({ externalId: 'e2' }));
    const firstRef = table.refOf(first);
    expect(table.rowOfRef(firstRef)).toBe(first);
    expect(table.distinctStrings).toBe(4);
    table.free(first);
    expect(table.size).toBe(1);
    expect(table.rowOfRef(firstRef)).toBe(-1);
    expect(table.distinctStrings).toBe(2); // mail and w1 went with their only holder
    const reused = table.create('id-3', event({ externalId: 'e3', atMs: T + 1 }));
    expect(reused).toBe(first);
    table.merge(reused, event({ externalId: 'e3', atMs: T + 1 }));
    expect(table.rowOfRef(firstRef)).toBe(-1);
    expect(table.rowOfRef(table.refOf(reused))).toBe(reused);
    expect(table.rowOfRef(table.refOf(other))).toBe(other);
    expect(table.read(reused)).toMatchObject({ id: 'id-3', externalId: 'e3', queue: null, workerId: null, error: null, extensions: null, maxRetries: null, history: [packHistoryEntry(T + 1, 1)] });
    expect(table.rowOfRef(12345)).toBe(-1);
    expect(table.rowOfRef(5)).toBe(-1); // a row never used, generation 0
  });

  test('given many jobs past its first size, then each row keeps its own fields, and a copy put back reads the same', () => {
    const table = new JobTable('c1');
    const rows = Array.from({ length: 300 }, (_, i) => {
      const row = table.create(`id-${i}`, event({ externalId: `e${i}` }));
      table.merge(row, event({ externalId: `e${i}`, atMs: T + i, state: 'completed', queue: `q${i % 3}`, startedAtMs: T, completedAtMs: T + i }));
      return row;
    });
    expect(rows.map((row) => [table.id(row), table.externalId(row), table.durationMsOf(row), table.queueOf(row)])).toEqual(
      Array.from({ length: 300 }, (_, i) => [`id-${i}`, `e${i}`, i, `q${i % 3}`]),
    );
    const copy = new JobTable('c1');
    const again = copy.insert(table.read(rows[299]!));
    expect(copy.read(again)).toEqual(table.read(rows[299]!));
    expect(copy.stateOf(again)).toBe('completed');
  });

  test('given jobs with extensions and arguments, then its sizes count their rows, id, externalId, texts (with their 5-byte headers) and history; freed rows leave them', () => {
    const table = new JobTable('c1');
    const extensions = { eta: 'soon', tags: ['a', 1] };
    const rows = ['id-1', 'id-22'].map((id, i) => table.create(id, event({ externalId: `external-${i}` })));
    table.merge(rows[0]!, event({ externalId: 'external-0', extensions, args: '{"name":"Jürgen"}' }));
    table.merge(rows[1]!, event({ externalId: 'external-1', atMs: T + 1, state: 'active' }));
    const sizes = table.sizes();
    expect([sizes.rows, sizes.idBytes, sizes.externalIdBytes, sizes.textBytes?.extensions, sizes.textBytes?.args]).toEqual([2, 9, 20, JSON.stringify(extensions).length + 5, 18 + 5]);
    expect(sizes.historyEntries).toBeGreaterThanOrEqual(2);
    expect(table.read(rows[0]!).extensions).toBe(JSON.stringify(extensions));
    table.free(rows[0]!);
    expect(table.sizes()).toMatchObject({ rows: 1, idBytes: 5, externalIdBytes: 10, textBytes: { extensions: 0, args: 0 } });
    table.checkInvariants();
  });

  test('given extensions as large as the contract allows (64 KiB serialized), then they read back whole', () => {
    const table = new JobTable('c1');
    const largest = { note: 'x'.repeat(JSON_OBJECT_BYTES_MAX - '{"note":""}'.length) };
    expect(JSON.stringify(largest).length).toBe(JSON_OBJECT_BYTES_MAX);
    const small = { eta: 'soon' };
    const rows = [largest, small].map((extensions, i) => {
      const created = event({ externalId: `e${i}`, extensions });
      const row = table.create(`id-${i}`, created);
      table.merge(row, created);
      return row;
    });
    expect(rows.map((row) => JSON.parse(table.read(row).extensions!))).toEqual([largest, small]);
  });

  test('given room reserved for the sizes a snapshot recorded, then rows loaded or created after it read as without it', () => {
    const source = new JobTable('c1');
    for (let i = 0; i < 100; i++) {
      const created = event({ externalId: `e${i}`, atMs: T + i, extensions: i % 10 === 0 ? { n: i } : undefined });
      source.merge(source.create(`id-${i}`, created), created);
    }
    const reserved = new JobTable('c1');
    reserved.reserve(source.sizes());
    const plain = new JobTable('c1');
    for (let i = 0; i < 150; i++) {
      const job = i < 100 ? source.read(i) : { ...source.read(0), id: `id-${i}`, externalId: `e${i}` };
      expect(reserved.read(reserved.insert(job))).toEqual(plain.read(plain.insert(job)));
    }
  });
});

/** Small log caps, so that the random events trim logs often. */
const LOG_LIMITS = { logBytesMax: 400, logLinesMax: 12 };

/** The merge rules as the decisions state them, on a plain object: the oracle for the table's rows. */
function referenceMerge(job: Job, event: JobEvent): void {
  const isNewest = event.atMs >= job.lastEventMs;
  // a new run: a later attempt, or a start after the held run completed; it keeps nothing of the last run
  const newRun =
    isNewest &&
    job.history.length > 0 &&
    ((event.attempt !== undefined && event.attempt > job.attempt) || (event.startedAtMs !== undefined && job.completedAtMs !== null && event.startedAtMs > job.completedAtMs));
  if (newRun) {
    const run = { attempt: job.attempt, state: outcomeOf(job.state), startedAtMs: job.startedAtMs, finishedAtMs: job.completedAtMs, workerId: job.workerId, error: job.error, stacktrace: job.stacktrace };
    job.attempts = withAttempt(job.attempts, run);
    Object.assign(job, { workerId: null, error: null, stacktrace: null, result: null, progress: null, progressData: null, startedAtMs: null, completedAtMs: null });
  }
  // an event of an earlier attempt says nothing of the current run, even when it is the newest
  const ofThisRun = newRun || event.attempt === undefined || event.attempt >= job.attempt;
  referenceInsert(job.history, event.atMs, stateCodeOf(event.state));
  job.state = lastHistoryState(job.history);
  type Taken = 'queue' | 'workerId' | 'maxRetries' | 'startedAtMs' | 'completedAtMs' | 'error' | 'stacktrace' | 'extensions' | 'args' | 'result';
  const take = <K extends Taken>(key: K, value: Job[K] | undefined): void => {
    if (value !== undefined && (isNewest || job[key] === null)) job[key] = value;
  };
  take('queue', event.queue);
  take('maxRetries', event.maxRetries);
  take('extensions', event.extensions === undefined ? undefined : JSON.stringify(event.extensions));
  take('args', event.args);
  if (ofThisRun) {
    take('workerId', event.workerId);
    take('startedAtMs', event.startedAtMs);
    take('completedAtMs', event.completedAtMs);
    take('error', event.error);
    take('stacktrace', event.stacktrace);
    take('result', event.result);
    // progress: a number and an object together, the newer report replacing both
    if ((event.progress !== undefined || event.progressData !== undefined) && (isNewest || (job.progress === null && job.progressData === null))) {
      job.progress = event.progress ?? null;
      job.progressData = event.progressData ?? null;
    }
  } else {
    const late = withLateFacts(job.attempts, event.attempt!, { state: event.state, startedAtMs: event.startedAtMs, finishedAtMs: event.completedAtMs, workerId: event.workerId, error: event.error, stacktrace: event.stacktrace });
    if (late !== null) job.attempts = late;
  }
  if (event.logs !== undefined) {
    const appended = appendedLog(job.logs, job.logLines, event.logs, event.logLineCount ?? 0, LOG_LIMITS);
    job.logs = appended.lines === 0 ? null : appended.text;
    job.logLines = appended.lines;
  }
  if (isNewest) {
    job.name = event.name;
    job.framework = event.framework;
    if (event.attempt !== undefined && ofThisRun) job.attempt = event.attempt;
    job.lastEventMs = event.atMs;
  }
  if (event.createdAtMs !== undefined) {
    if (isNewest || !job.createdAtReported) {
      job.createdAtMs = event.createdAtMs;
      job.createdAtReported = true;
    }
  } else if (!job.createdAtReported && event.atMs < job.createdAtMs) job.createdAtMs = event.atMs;
}

describe('the job table against the merge rules', () => {
  test('given random events, some older than the newest, with random fields, then every row reads as the rules say', () => {
    for (const seed of [1, 2, 3, 4]) {
      const random = new SeededRandom(seed);
      const table = new JobTable('c1', LOG_LIMITS);
      const reference = new Map<number, Job>();
      const pick = <T>(values: readonly T[]): T => values[random.int(values.length)]!;
      const maybe = <T>(value: T): T | undefined => (random.next() < 0.3 ? value : undefined);
      for (let step = 0; step < 3000; step++) {
        const rows = [...reference.keys()];
        if (rows.length > 0 && random.next() < 0.05) {
          const row = pick(rows);
          table.free(row);
          reference.delete(row);
          continue;
        }
        const fields: JobEvent = {
          ...event({ externalId: `e${step}` }),
          atMs: T + random.int(40) * 1000,
          state: pick(['queued', 'active', 'completed', 'failed', 'retrying'] as const),
          name: pick(['tasks.a', 'tasks.b']),
          framework: pick(['celery', 'bullmq'] as const),
          queue: maybe(pick(['mail', 'media'])),
          workerId: maybe(pick(['w1', 'w2'])),
          attempt: maybe(random.int(4)),
          maxRetries: maybe(random.int(3)),
          progress: maybe(random.next()),
          error: maybe(pick(['boom', 'bang'])),
          stacktrace: maybe(pick(['trace 1', 'trace 2'])),
          extensions: maybe({ n: random.int(3) }),
          args: maybe(pick(['{"userId":42}', '[1,"two"]', '"Jürgen"'])),
          result: maybe(pick(['null', '{"ok":true}'])),
          progressData: maybe(pick(['{"percent":50}', '{"stage":"upload"}'])),
          createdAtMs: maybe(T + random.int(40) * 1000),
          startedAtMs: maybe(T + random.int(40) * 1000),
          completedAtMs: maybe(T + random.int(40) * 1000),
        };
        const lines = random.int(8);
        if (random.next() < 0.3) Object.assign(fields, { logs: JSON.stringify(Array.from({ length: lines }, (_, n) => `line ${step}.${n} ${'x'.repeat(random.int(40))}`)), logLineCount: lines });
        for (const key of Object.keys(fields) as Array<keyof JobEvent>) if (fields[key] === undefined) delete fields[key];
        if (rows.length === 0 || random.next() < 0.3) {
          const row = table.create(`id-${step}`, fields);
          const created: Job = { ...table.read(row), history: [] };
          table.merge(row, fields);
          referenceMerge(created, fields);
          reference.set(row, created);
        } else {
          const row = pick(rows);
          const expected = reference.get(row)!;
          const wasNewest = fields.atMs >= expected.lastEventMs;
          expect(table.merge(row, fields)).toBe(wasNewest);
          referenceMerge(expected, fields);
        }
      }
      for (const [row, expected] of reference) {
        expect(table.read(row)).toEqual(expected);
        expect([table.stateChangedAtMs(row), table.durationMsOf(row), table.createdAtReportedOf(row)]).toEqual([
          currentRunStartMs(expected.history),
          expected.state !== 'active' && expected.startedAtMs !== null && expected.completedAtMs !== null && expected.completedAtMs >= expected.startedAtMs
            ? expected.completedAtMs - expected.startedAtMs
            : null,
          expected.createdAtReported,
        ]);
      }
      expect(table.size).toBe(reference.size);
      table.checkInvariants();
    }
  });
});

describe('the relation columns', () => {
  test('given relations in events of any order, then a newer event decides, an older one only fills a gap, and a freed row gives its codes back', () => {
    const table = new JobTable('c1');
    const row = table.create('id-1', event({ atMs: T + 10 }));
    table.merge(row, event({ atMs: T + 10, parentExternalId: 'newer-parent' }));
    table.merge(row, event({ atMs: T, parentExternalId: 'older-parent', rootExternalId: 'older-root' }));
    expect([table.relations.parentOf(row), table.relations.rootOf(row)]).toEqual(['newer-parent', 'older-root']);
    table.merge(row, event({ atMs: T + 20, rootExternalId: 'newest-root' }));
    expect(table.read(row)).toMatchObject({ parentExternalId: 'newer-parent', rootExternalId: 'newest-root' });
    // an event naming nothing leaves them
    table.merge(row, event({ atMs: T + 30 }));
    expect(table.read(row)).toMatchObject({ parentExternalId: 'newer-parent', rootExternalId: 'newest-root' });
    const other = table.create('id-2', event({ externalId: 'e2', parentExternalId: 'newer-parent' }));
    table.merge(other, event({ externalId: 'e2', parentExternalId: 'newer-parent' }));
    expect(table.relations.parentCodeOf(other)).toBe(table.relations.parentCodeOf(row)); // one code for a parent's children
    const before = table.distinctStrings;
    table.free(row);
    // 'newest-root' goes with the row; 'newer-parent' stays, held by the other child
    expect(table.distinctStrings).toBe(before - 1);
    expect(table.relations.codeOf('newest-root')).toBe(NO_CODE);
    expect(table.relations.codeOf('newer-parent')).toBe(table.relations.parentCodeOf(other));
    const reused = table.create('id-3', event({ externalId: 'e3' }));
    expect(table.read(reused)).toMatchObject({ parentExternalId: null, rootExternalId: null });
  });

  test('given jobs without relations, then they name none, before and after the first job that does', () => {
    const table = new JobTable('c1');
    const rows = Array.from({ length: 100 }, (_, i) => {
      const row = table.create(`id-${i}`, event({ externalId: `e${i}` }));
      table.merge(row, event({ externalId: `e${i}` }));
      return row;
    });
    const child = table.create('id-child', event({ externalId: 'child' }));
    table.merge(child, event({ externalId: 'child', parentExternalId: 'e1' }));
    expect(rows.map((row) => table.relations.parentOf(row)).every((parent) => parent === null)).toBe(true);
    expect(table.relations.parentOf(child)).toBe('e1');
    // rows made after it, past the capacity the table had then, name none either
    const later = Array.from({ length: 200 }, (_, i) => table.create(`id-later-${i}`, event({ externalId: `later-${i}` })));
    expect(later.every((row) => table.relations.parentOf(row) === null && table.relations.rootOf(row) === null)).toBe(true);
  });
});

describe("the column store's stated preconditions", () => {
  test('a row freed twice, a string set over a held row, a history read of an empty row and a code released below zero are refused', () => {
    const table = new JobTable('c1');
    const created = event();
    const row = table.create('id-1', created);
    table.merge(row, created);
    table.free(row);
    expect(() => table.free(row)).toThrow('freed twice');
    expect(() => table.free(99)).toThrow('holds no job');

    const strings = new StringColumn();
    strings.ensureRows(1);
    strings.set(0, 'a');
    expect(() => strings.set(0, 'b')).toThrow('already holds a string');

    const history = new HistoryColumn();
    history.ensureRows(1);
    expect(() => history.last(0)).toThrow('no history');

    const codes = new CodeTable();
    const code = codes.acquire('x');
    codes.release(code);
    expect(() => codes.release(code)).toThrow('no row holds it');
    expect(() => codes.release(7)).toThrow('no row holds it');
  });

  test("checkInvariants finds a count that drifted from what the rows hold", () => {
    const table = new JobTable('c1');
    const created = event({ queue: 'mail', logs: '["a","b"]', logLineCount: 2 });
    const row = table.create('id-1', created);
    table.merge(row, created);
    table.checkInvariants();
    (table as unknown as { columns: { logLines: Uint16Array } }).columns.logLines[row] = 3;
    expect(() => table.checkInvariants()).toThrow('counts 3 log lines and holds 2');
    (table as unknown as { columns: { logLines: Uint16Array } }).columns.logLines[row] = 2;
    (table as unknown as { codeTables: { names: CodeTable } }).codeTables.names.acquire('mail');
    expect(() => table.checkInvariants()).toThrow("('mail') counts 2 holders, 1 rows hold it");
  });
});
