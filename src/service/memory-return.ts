/**
 * Giving memory back after a burst. Parsing ingest bodies and applying replicated records
 * leaves freed JavaScript objects the collector has not swept yet and allocator pages it
 * keeps for later; JavaScriptCore collects as allocation goes on, but a node that has gone
 * quiet allocates nothing, so that memory stays resident until the next burst: measured
 * (docs/cluster.md, "Memory with and without standbys") as a third of a node's resident
 * memory after a million jobs arrived. `Bun.gc(true)` runs a full collection and has the
 * allocator (mimalloc) return free pages to the system.
 *
 * A full collection stops the thread (hundreds of milliseconds with a million jobs held),
 * so it runs only when all of these hold:
 * - the node has taken in at least `workBytesMin` (log bytes written, replicated records
 *   and snapshots applied, a recovery) since the last one: a burst left something behind;
 * - nothing was taken in for `idleMs` and no commit waits for the log: the burst is over
 *   (a log that stalls, a publish waiting for its quorum, is not quiet: a collection then
 *   would only add to the wait);
 * - the thread has run free at least STOPPED_TO_FREE times as long as the last collection
 *   stopped it (and at least `idleMs`): bursts separated by short pauses spend at most 1% of
 *   the node's time in these stops, however large its heap.
 * The check is a timer turn, never on a request's path. Off with `MEMORY_RETURN_IDLE_MS=0`.
 */
import type { LogWriterObserver } from '../../persistence/log-writer.ts';
import type { LogLine } from '../logging/log-line.ts';

/** After a collection that stopped the thread for d ms, the next waits at least this many times d. */
export const STOPPED_TO_FREE = 100;
const MB = 1024 * 1024;

/** One full collection's cost and what it gave back. */
export interface MemoryReturned {
  durationMs: number;
  residentBeforeBytes: number;
  residentAfterBytes: number;
  /** bytes taken in since the previous collection */
  workBytes: number;
}

export interface IdleCollectionOptions {
  /** quiet this long after a burst before collecting; 0 = never */
  idleMs: number;
  /** bytes taken in since the last collection that make one worth its stop */
  workBytesMin: number;
  /** a count of bytes taken in that only grows (WorkMeter plus a replica's bytes applied) */
  workBytes: () => number;
  /** the engine at work: a count that moves with every record committed or applied, and the commits waiting for the log */
  activity: () => { moves: number; waiting: number };
  /** the monotonic clock, ms */
  nowMs: () => number;
  /** the full collection; returns the resident bytes before and after */
  collect: () => { residentBeforeBytes: number; residentAfterBytes: number };
  collected: (returned: MemoryReturned) => void;
}

/** What an engine shows of its work (actors/engine.ts). */
export function activityOf(engine: { recordsTaken: number; commitsWaiting: number }): IdleCollectionOptions['activity'] {
  return () => ({ moves: engine.recordsTaken, waiting: engine.commitsWaiting });
}

/** The decision, fed by a timer: `check()` collects when a burst is over and the last collection is old enough. */
export class IdleCollection {
  private seenWork: number;
  private seenMoves: number;
  private lastWorkAtMs: number;
  private workAtCollection = 0;
  private nextAllowedAtMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: IdleCollectionOptions) {
    this.seenWork = options.workBytes();
    this.seenMoves = options.activity().moves;
    this.lastWorkAtMs = options.nowMs();
  }

  /** One timer turn; true when it collected. */
  check(): boolean {
    const { idleMs, workBytesMin, workBytes, activity, nowMs, collect, collected } = this.options;
    const now = nowMs();
    const work = workBytes();
    const { moves, waiting } = activity();
    if (work !== this.seenWork || moves !== this.seenMoves || waiting > 0) {
      this.seenWork = work;
      this.seenMoves = moves;
      this.lastWorkAtMs = now;
      return false;
    }
    const burst = work - this.workAtCollection;
    if (idleMs <= 0 || burst < workBytesMin || now - this.lastWorkAtMs < idleMs || now < this.nextAllowedAtMs) return false;
    const startedAtMs = nowMs();
    const resident = collect();
    const endedAtMs = nowMs();
    const durationMs = endedAtMs - startedAtMs;
    this.workAtCollection = work;
    this.nextAllowedAtMs = endedAtMs + Math.max(idleMs, STOPPED_TO_FREE * durationMs);
    collected({ durationMs, workBytes: burst, ...resident });
    return true;
  }
}

/** Bytes this node wrote to its log (a LogWriterObserver) plus those noted by hand (a recovery). */
export class WorkMeter implements LogWriterObserver {
  bytes = 0;

  batchWritten(_records: number, bytes: number): void {
    this.bytes += bytes;
  }

  synced(): void {}

  note(bytes: number): void {
    this.bytes += bytes;
  }
}

/** A full collection of this thread's heap, the allocator told to return free pages; resident memory around it. */
export function fullCollection(): { residentBeforeBytes: number; residentAfterBytes: number } {
  const residentBeforeBytes = process.memoryUsage.rss();
  Bun.gc(true);
  return { residentBeforeBytes, residentAfterBytes: process.memoryUsage.rss() };
}

/** How often the timer looks: a tenth of the quiet time, between 100 ms and 1 s. */
export function checkIntervalMs(idleMs: number): number {
  return Math.min(1_000, Math.max(100, Math.round(idleMs / 10)));
}

/**
 * Starts the timer (unref'd) and returns what stops it; with `idleMs` 0 nothing runs. Each
 * collection is logged at debug and told to `collected` (the metrics).
 */
export function startMemoryReturn(
  settings: { idleMs: number; workBytesMin: number },
  measures: Pick<IdleCollectionOptions, 'workBytes' | 'activity'>,
  log: LogLine,
  collected: (returned: MemoryReturned) => void = () => {},
): () => void {
  if (settings.idleMs <= 0) return () => {};
  const collection = new IdleCollection({
    ...settings,
    ...measures,
    nowMs: () => performance.now(),
    collect: fullCollection,
    collected: (returned) => {
      log(describeReturn(returned, settings.idleMs), { severity: 'debug', ...returned });
      collected(returned);
    },
  });
  const timer = setInterval(() => collection.check(), checkIntervalMs(settings.idleMs));
  timer.unref();
  return () => clearInterval(timer);
}

export function describeReturn(returned: MemoryReturned, idleMs: number): string {
  const mb = (bytes: number): string => `${Math.round(bytes / MB)} MB`;
  return (
    `memory returned after ${idleMs / 1000} s quiet (${mb(returned.workBytes)} taken in since the last collection): ` +
    `full collection in ${Math.round(returned.durationMs)} ms, resident ${mb(returned.residentBeforeBytes)} -> ${mb(returned.residentAfterBytes)}`
  );
}
