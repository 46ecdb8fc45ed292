import type { DataDirManifest } from './data-dir-manifest.ts';
import { RecoveryRefusedError, describeError } from './errors.ts';
import { FRAME_HEADER_BYTES, LOG_MAGIC, readFrame } from './frame.ts';
import { invariant } from './invariant.ts';
import type { SegmentFile, TornTail } from './log-scan.ts';
import { assessDataDir, takeInventory } from './recovery-assessment.ts';
import type { RecoveryAssessment, RecoveryBase } from './recovery-assessment.ts';
import { RECOVERY_DECISIONS } from './recovery-decisions.ts';
import { decodeValue, releaseDecoderInput } from './record-codec.ts';
import type { Storage } from './storage.ts';

/**
 * Recovery, which never guesses: judge the directory (recovery-assessment.ts), look up the one
 * decision for that case (recovery-decisions.ts, where the table lives), and carry it
 * out, saying in log lines what was done. It hands the engine the snapshot chunks and the
 * records after the snapshot, in seq order, reading only; once all were taken it removes
 * unfinished snapshot files, cuts a torn tail and syncs what was read. So a refusal, at
 * the assessment or from the handler (a chunk or record whose content is not what it
 * expects), changes nothing on disk, and names the file, the offset and what was wrong.
 * A dry run (the `verify` command) makes no change at all and says what it would do.
 */
export interface RecoveryHandler {
  snapshotChunk(chunk: unknown): void;
  /** After the last chunk of the snapshot recovery starts from (none when it starts empty); may refuse it by throwing. */
  snapshotEnded?(): void;
  record(record: unknown, seq: number): void;
  /**
   * How the time spent in `snapshotChunk` splits, as the handler measured it inside its calls
   * (the engine: loading the rows, then building its lookups at the snapshot's end). Without
   * it that time is one phase, `restore`.
   */
  snapshotChunkPhases?(): RecoveryPhase[];
}

/** One step of recovery and the wall-clock time it took. */
export interface RecoveryPhase {
  name: string;
  ms: number;
}

export interface RecoveryReport {
  /** Seq of the snapshot recovery started from, 0 when it started empty. */
  snapshotSeq: number;
  recordsReplayed: number;
  truncatedBytes: number;
  durationMs: number;
  /**
   * Where `durationMs` went, in order, each phase timed on its own (they add up to a little
   * less than the whole): `read` (list the directory, read the snapshot file and check its
   * checksums, scan the log), `sync` (sync what is replayed, cut a torn tail), `decode` (msgpack
   * of the snapshot chunks), the handler's snapshot work (`snapshotChunkPhases`, or `restore`),
   * `replay` (read, decode and apply the log records). A cluster's recovery has none.
   */
  phases?: RecoveryPhase[];
  lines: string[];
  /** What the data directory's manifest says it has held (data-dir-manifest.ts), e.g. `accounts`. */
  marks?: readonly string[];
}

export interface RecoveryParams {
  dir: string;
  storage: Storage;
  handler: RecoveryHandler;
  /** One line per step; `fields` carry its figures for a structured logger. */
  log: (line: string, fields?: Record<string, unknown>) => void;
  /** A progress line every this many replayed records... */
  progressEveryRecords?: number;
  /** ... and whenever this much time passed since the last one, so a long replay is seen to move. */
  progressEveryMs?: number;
  /** Change nothing on disk (no directory made, no tail cut, no file removed or synced): say what would be done. */
  dryRun?: boolean;
}

export interface RecoveryResult {
  report: RecoveryReport;
  lastSeq: number;
  /** Frame bytes of the replayed records: what the next restart would replay again. */
  logBytesAfterSnapshot: number;
  /** The newest segment when it ends at lastSeq, so appends may continue in it. */
  continueSegment: { path: string; firstSeq: number; sizeBytes: number } | undefined;
  /** The manifest as recovery found it (an empty one when there was none), for the writer to keep. */
  manifest: DataDirManifest;
}

const PROGRESS_EVERY_RECORDS = 250_000;
const PROGRESS_EVERY_MS = 1_000;
/** The clock is read once per this many records: a read per record would cost more than the line. */
const PROGRESS_CLOCK_EVERY_RECORDS = 256;

export async function recoverDataDir(params: RecoveryParams): Promise<RecoveryResult> {
  const { dir, storage } = params;
  const dryRun = params.dryRun === true;
  const startedAtMs = performance.now();
  const lines: string[] = [];
  const say = (line: string, fields?: Record<string, unknown>): void => {
    lines.push(line);
    params.log(line, fields);
  };

  if (!dryRun) await storage.mkdirp(dir);
  const inventory = await takeInventory(storage, dir);
  if (inventory.segments.length === 0 && inventory.snapshots.length === 0) {
    say(`data directory ${dir} holds no snapshot and no log: ${dryRun ? 'a start would begin empty' : 'starting empty'}`);
  }
  const assessment = await assessDataDir(storage, inventory, say);
  const readMs = performance.now() - startedAtMs;
  const decision = RECOVERY_DECISIONS[assessment.snapshot][assessment.log.condition];
  // Stryker disable next-line ConditionalExpression,LogicalOperator,StringLiteral: the table refuses every corrupt log, so either half decides alone (the second narrows the type)
  if (decision.action === 'refuse' || assessment.log.condition === 'corrupt') {
    throw new RecoveryRefusedError(refusalMessage(dir, assessment));
  }
  const log = assessment.log;
  const { base } = assessment;

  // Reading only: a chunk or record the handler refuses stops the start with nothing changed.
  const snapshotWork = applySnapshot(dir, base, params.handler);
  const replayStartedAtMs = performance.now();
  const replay = await replayLog(storage, log, base.seq, params, say, startedAtMs);
  releaseDecoderInput();
  const replayMs = performance.now() - replayStartedAtMs;
  const lastSeq = Math.max(base.seq, replay.lastSegmentLastSeq ?? 0);
  // Stryker disable next-line ConditionalExpression,StringLiteral: an invariant that holds in correct code; only a bug elsewhere trips it
  invariant(lastSeq === log.lastLogSeq, `replay reached seq ${lastSeq}, the assessment expected ${log.lastLogSeq}`);

  // Everything was taken: from here on the directory may change.
  const syncStartedAtMs = performance.now();
  // Stryker disable next-line StringLiteral: the message of an invariant that holds in correct code
  if (decision.cutTornTail) invariant(log.tornTail, 'a torn log carries its torn tail');
  const truncatedBytes = await settleDataDir(storage, dir, inventory.unfinishedSnapshots, decision.cutTornTail ? log.tornTail : undefined, [...(base.path ? [base.path] : []), ...log.segments.map((segment) => segment.path)], dryRun, say);
  const syncMs = performance.now() - syncStartedAtMs;

  const durationMs = performance.now() - startedAtMs;
  say(
    `${dryRun ? 'would recover' : 'recovered'} from ${base.description} (seq ${base.seq}) and ${replay.recordsReplayed} log records ` +
      `in ${Math.round(durationMs)} ms; last seq ${lastSeq}`,
    { snapshotSeq: base.seq, records: replay.recordsReplayed, logBytes: replay.replayedBytes, durationMs: Math.round(durationMs), lastSeq },
  );
  const phases: RecoveryPhase[] = [
    { name: 'read', ms: readMs },
    { name: 'decode', ms: snapshotWork.decodeMs },
    ...(params.handler.snapshotChunkPhases?.() ?? [{ name: 'restore', ms: snapshotWork.restoreMs }]),
    { name: 'replay', ms: replayMs },
    { name: 'sync', ms: syncMs },
  ];
  say(`recovery phases: ${describePhases(phases)}`, {
    phasesMs: Object.fromEntries(phases.map((phase) => [phase.name, Math.round(phase.ms)])),
    durationMs: Math.round(durationMs),
  });
  const newest = log.segments.at(-1);
  const continueSegment =
    newest && replay.lastSegmentLastSeq === lastSeq
      ? { path: newest.path, firstSeq: newest.firstSeq, sizeBytes: replay.lastSegmentSizeBytes }
      : undefined;
  const manifest = assessment.manifest;
  return {
    report: { snapshotSeq: base.seq, recordsReplayed: replay.recordsReplayed, truncatedBytes, durationMs, phases, lines, marks: manifest.marks },
    lastSeq,
    logBytesAfterSnapshot: replay.replayedBytes,
    continueSegment,
    manifest,
  };
}

/**
 * What recovery changes once everything was read: unfinished snapshot writes removed, the
 * torn tail cut, the files it kept synced (a dry run says what it would do). Returns the
 * bytes cut.
 */
async function settleDataDir(
  storage: Storage,
  dir: string,
  unfinishedSnapshots: readonly string[],
  tornTail: TornTail | undefined,
  kept: readonly string[],
  dryRun: boolean,
  say: (line: string, fields?: Record<string, unknown>) => void,
): Promise<number> {
  if (dryRun) {
    for (const path of unfinishedSnapshots) say(`would remove ${path}: a snapshot write that never finished`, { path });
    if (tornTail !== undefined) say(`would cut ${describeTornTail(tornTail)}`, { path: tornTail.segment.path });
    return 0;
  }
  for (const path of unfinishedSnapshots) {
    await storage.remove(path);
    say(`removed ${path}: a snapshot write that never finished`, { severity: 'warn', path });
  }
  if (tornTail !== undefined) await cutTornTail(storage, tornTail, say);
  await makeDurable(storage, dir, kept);
  return tornTail?.droppedBytes ?? 0;
}

/** `read 120 ms, decode 800 ms, ...`: the figures an operator compares, rounded to the ms. */
export function describePhases(phases: readonly RecoveryPhase[]): string {
  return phases.map((phase) => `${phase.name} ${Math.round(phase.ms).toLocaleString('en-US')} ms`).join(', ');
}

/**
 * Decodes and hands over each snapshot chunk, timing the two apart (msgpack vs the handler's
 * own work). A chunk msgpack cannot read, or one the handler refuses, stops the start naming
 * the file and the chunk's offset.
 */
function applySnapshot(dir: string, base: RecoveryBase, handler: RecoveryHandler): { decodeMs: number; restoreMs: number } {
  let decodeMs = 0;
  let restoreMs = 0;
  const { chunkPayloads, chunkOffsets } = base;
  for (const [index, payload] of chunkPayloads.entries()) {
    const decodeStartedAtMs = performance.now();
    let restoreStartedAtMs = decodeStartedAtMs;
    try {
      const chunk = decodeValue(payload);
      restoreStartedAtMs = performance.now();
      handler.snapshotChunk(chunk);
    } catch (error) {
      throw unreadable(dir, error, `snapshot ${base.path} chunk ${index + 1} of ${chunkPayloads.length} (frame at offset ${chunkOffsets[index]})`, snapshotRemedy(base.path!));
    }
    decodeMs += restoreStartedAtMs - decodeStartedAtMs;
    restoreMs += performance.now() - restoreStartedAtMs;
  }
  if (base.path !== undefined && handler.snapshotEnded !== undefined) {
    const startedAtMs = performance.now();
    try {
      handler.snapshotEnded();
    } catch (error) {
      throw unreadable(dir, error, `snapshot ${base.path}`, snapshotRemedy(base.path));
    }
    restoreMs += performance.now() - startedAtMs;
  }
  return { decodeMs, restoreMs };
}

/**
 * The refusal to start for a stored value that could not be read back: msgpack's failure,
 * or the handler's refusal of what it found (its shape). It names where the value is and
 * what the operator can do; nothing has changed on disk at this point.
 */
function unreadable(dir: string, error: unknown, where: string, remedy: string): RecoveryRefusedError {
  const what = error instanceof Error && error.name === 'ShapeError' ? error.message : `it could not be read (${describeError(error)})`;
  return new RecoveryRefusedError(`refusing to start from data directory ${dir}: ${where}: ${what}. To start: ${remedy}. Nothing in the directory was changed.`, { cause: error });
}

/** What an operator can do about a snapshot that cannot be loaded. */
function snapshotRemedy(path: string): string {
  return (
    `restore ${path} from a backup; or move it out of the directory, and a start recovers from an older snapshot or the log if they hold ` +
    'every record it covers (`npm run cli -- verify` reads the directory without starting and says whether they do)'
  );
}

/** What an operator can do about a log record that cannot be applied: everything from it on is lost without a backup. */
function recordRemedy(segment: SegmentFile, seq: number, offset: number, laterSegments: readonly SegmentFile[]): string {
  const alsoMove = laterSegments.length > 0 ? ` and move ${laterSegments.map((each) => each.path).join(', ')} out of the directory` : '';
  return (
    `restore ${segment.path} from a backup; or, to accept losing every record from seq ${seq} on, ` +
    `cut the file at the record (truncate -s ${offset} ${segment.path})${alsoMove}`
  );
}

function refusalMessage(dir: string, assessment: RecoveryAssessment): string {
  // Stryker disable next-line ConditionalExpression,StringLiteral: an invariant that holds in correct code; only a bug elsewhere trips it
  invariant(assessment.log.condition === 'corrupt', 'only a corrupt log is refused');
  return (
    `refusing to start from data directory ${dir}: ${assessment.log.problem}. ` +
    `To start: ${assessment.log.remedy}. Nothing in the directory was changed.`
  );
}

/**
 * What recovery reads may exist only in the page cache: a process that crashed (not the
 * machine) leaves unsynced bytes readable, and so does a backup copied in by hand. The
 * state rebuilt from them, and every record acknowledged on top of it, must not rest on
 * bytes a later power loss can take, so everything replayed is synced once here.
 */
async function makeDurable(storage: Storage, dir: string, paths: readonly string[]): Promise<void> {
  for (const path of paths) await syncFile(storage, path);
  await storage.fsyncDir(dir);
}

async function syncFile(storage: Storage, path: string): Promise<void> {
  const file = await storage.openAppend(path);
  try {
    await file.datasync();
  } finally {
    await file.close();
  }
}

async function cutTornTail(storage: Storage, tail: TornTail, say: (line: string, fields?: Record<string, unknown>) => void): Promise<void> {
  await storage.truncate(tail.segment.path, tail.offset);
  // The cut must reach the disk before new records are appended after it.
  await syncFile(storage, tail.segment.path);
  say(`cut ${describeTornTail(tail)}`, { severity: 'warn', path: tail.segment.path, offset: tail.offset, droppedBytes: tail.droppedBytes });
}

function describeTornTail(tail: TornTail): string {
  return `the torn tail of ${tail.segment.path} at offset ${tail.offset}: dropped ${tail.droppedBytes} bytes (${tail.reason})`;
}

interface ReplayTotals {
  recordsReplayed: number;
  replayedBytes: number;
  lastSegmentLastSeq: number | undefined;
  lastSegmentSizeBytes: number;
}

async function replayLog(
  storage: Storage,
  log: { segments: readonly SegmentFile[]; intactBytes: number; tornTail: TornTail | undefined },
  baseSeq: number,
  params: RecoveryParams,
  say: (line: string, fields?: Record<string, unknown>) => void,
  startedAtMs: number,
): Promise<ReplayTotals> {
  const progress = new ReplayProgress(params, log.intactBytes, say, startedAtMs);
  const totals: ReplayTotals = { recordsReplayed: 0, replayedBytes: 0, lastSegmentLastSeq: undefined, lastSegmentSizeBytes: 0 };
  let bytesBefore = 0; // of the segments already read
  for (const [index, segment] of log.segments.entries()) {
    const whole = await storage.readFile(segment.path);
    // a torn tail is cut once everything was read: its records end where the tear begins
    const bytes = log.tornTail?.segment.path === segment.path ? whole.subarray(0, log.tornTail.offset) : whole;
    let expectedSeq = segment.firstSeq;
    for (let offset = 0; offset < bytes.length; expectedSeq++) {
      const outcome = readFrame(bytes, offset, LOG_MAGIC, expectedSeq);
      // Stryker disable next-line ConditionalExpression,StringLiteral: the assessment read the same bytes just before; only a concurrent writer, which the lock excludes, trips it
      invariant(outcome.kind === 'ok', `${segment.path} changed between assessment and replay (${outcome.kind} at ${offset})`);
      // Stryker disable next-line ConditionalExpression,EqualityOperator: the writer rotates before every snapshot, so no replayed segment holds a record at or below the base
      if (outcome.seq > baseSeq) {
        try {
          params.handler.record(decodeValue(outcome.payload), outcome.seq);
        } catch (error) {
          const where = `log segment ${segment.path} record seq ${outcome.seq} (frame at offset ${offset})`;
          throw unreadable(params.dir, error, where, recordRemedy(segment, outcome.seq, offset, log.segments.slice(index + 1)));
        }
        totals.recordsReplayed += 1;
        totals.replayedBytes += FRAME_HEADER_BYTES + outcome.payload.length;
        progress.replayed(totals.recordsReplayed, outcome.seq, bytesBefore + outcome.nextOffset);
      }
      offset = outcome.nextOffset;
    }
    bytesBefore += bytes.length;
    totals.lastSegmentLastSeq = expectedSeq - 1;
    totals.lastSegmentSizeBytes = bytes.length;
  }
  return totals;
}

/**
 * The progress lines of a long replay: records so far, the share of the log read, the
 * rate, every `progressEveryRecords` records and at least every `progressEveryMs`, so
 * whoever watches a big data directory restart sees it move and can tell how long is left.
 */
class ReplayProgress {
  private readonly everyRecords: number;
  private readonly everyMs: number;
  private lastLineAtMs: number;

  constructor(
    params: RecoveryParams,
    private readonly logBytes: number,
    private readonly say: (line: string, fields?: Record<string, unknown>) => void,
    private readonly startedAtMs: number,
  ) {
    this.everyRecords = params.progressEveryRecords ?? PROGRESS_EVERY_RECORDS;
    this.everyMs = params.progressEveryMs ?? PROGRESS_EVERY_MS;
    this.lastLineAtMs = startedAtMs;
  }

  replayed(records: number, seq: number, bytesRead: number): void {
    const countDue = records % this.everyRecords === 0;
    if (!countDue && records % PROGRESS_CLOCK_EVERY_RECORDS !== 0) return;
    const nowMs = performance.now();
    if (!countDue && nowMs - this.lastLineAtMs < this.everyMs) return;
    this.lastLineAtMs = nowMs;
    // Stryker disable next-line ArithmeticOperator: a progress line's figures, read by people only
    const elapsedMs = Math.round(nowMs - this.startedAtMs);
    const percent = this.logBytes === 0 ? 100 : Math.min(100, Math.floor((bytesRead / this.logBytes) * 100));
    const recordsPerSecond = Math.round(records / Math.max(nowMs - this.startedAtMs, 1) * 1000);
    this.say(
      `replayed ${records} log records (through seq ${seq}, ${percent}% of ${this.logBytes} log bytes) in ${elapsedMs} ms, ${recordsPerSecond} records/s`,
      { records, seq, percent, logBytes: this.logBytes, durationMs: elapsedMs, recordsPerSecond },
    );
  }
}
