/**
 * Where an ingest request's time goes, for the tail-latency question of the load test:
 * the synchronous work of a request (validate, decide, encode, apply), its wait for the
 * group commit, the log's write and fdatasync per group, and the longest stalls of the
 * event loop (a long synchronous step, a snapshot chunk or a GC pause all show there).
 * Always on: a clock read and a typed-array store per request, a timer every 20 ms.
 * The service logs the summary when it stops (`ingest timings: ...`); load/bench.ts prints it.
 */

/** The newest `capacity` samples of one quantity, with percentiles on demand. */
export class LatencySamples {
  private readonly values: Float64Array;
  private count = 0;
  private maxValue = 0;

  constructor(capacity = 65_536) {
    this.values = new Float64Array(capacity);
  }

  add(value: number): void {
    this.values[this.count % this.values.length] = value;
    this.count++;
    if (value > this.maxValue) this.maxValue = value;
  }

  get size(): number {
    return this.count;
  }

  /** "p50 a / p99 b / max c ms" over the kept samples (max over all). */
  describe(): string {
    if (this.count === 0) return 'none';
    const kept = this.values.slice(0, Math.min(this.count, this.values.length)).sort();
    const at = (p: number): number => kept[Math.min(kept.length - 1, Math.ceil((p / 100) * kept.length) - 1)]!;
    return `p50 ${at(50).toFixed(1)} / p99 ${at(99).toFixed(1)} / max ${this.maxValue.toFixed(1)} ms`;
  }
}

const LOOP_PROBE_MS = 20;
/** A probe later than this counts as a stall. */
const STALL_MS = 50;

export class IngestTimings {
  /** decide + append + apply: the request's synchronous step on the event loop */
  readonly work = new LatencySamples();
  /** from the end of that step until the log said durable */
  readonly durableWait = new LatencySamples();
  /** per group commit: write() and fdatasync */
  readonly groupWrite = new LatencySamples();
  readonly groupSync = new LatencySamples();
  private groupRecords = 0;
  private readonly stalls = new LatencySamples();
  private probe: ReturnType<typeof setInterval> | undefined;

  /** Starts the event-loop probe (unref'd: it never keeps the process alive). */
  start(): void {
    let expected = performance.now() + LOOP_PROBE_MS;
    this.probe = setInterval(() => {
      const now = performance.now();
      const late = now - expected;
      if (late > STALL_MS) this.stalls.add(late);
      expected = now + LOOP_PROBE_MS;
    }, LOOP_PROBE_MS);
    this.probe.unref?.();
  }

  stop(): void {
    clearInterval(this.probe);
  }

  /** The log writer's observer: one group commit's write() (persistence/log-writer.ts LogWriterObserver). */
  batchWritten(records: number, _bytes: number, writeMs: number): void {
    this.groupRecords += records;
    this.groupWrite.add(writeMs);
  }

  /** The log writer's observer: one fdatasync. */
  synced(syncMs: number): void {
    this.groupSync.add(syncMs);
  }

  summary(): string {
    const groups = this.groupWrite.size;
    return (
      `ingest timings: ${this.work.size} requests; work ${this.work.describe()}; durable wait ${this.durableWait.describe()}; ` +
      `group commits ${groups} (${groups === 0 ? 0 : (this.groupRecords / groups).toFixed(1)} records each): write ${this.groupWrite.describe()}, sync ${this.groupSync.describe()}; ` +
      `event-loop stalls over ${STALL_MS} ms: ${this.stalls.size} (${this.stalls.describe()})`
    );
  }
}
