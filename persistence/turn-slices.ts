/**
 * Long work cut into slices of a few milliseconds, with a turn of the event loop between
 * them: the requests of other connections (a dashboard's GET, a health check) are served in
 * between instead of waiting for the whole. The engine runs every connection on one thread,
 * so this is what gives each its fair share when one sends heavy bodies, and what keeps a
 * cluster node renewing its leases while it loads a partition (cluster/partition-reader.ts).
 */

/** Long enough that the yields cost nothing measurable, short enough to stay far under a 100 ms p99. */
export const TURN_SLICE_MS = 8;

export class TurnSlices {
  private sliceStartedMs = performance.now();

  constructor(private readonly sliceMs = TURN_SLICE_MS) {}

  /** Yields to the event loop when the current slice is used up; otherwise returns at once. */
  async next(): Promise<void> {
    if (performance.now() - this.sliceStartedMs < this.sliceMs) return;
    await new Promise<void>((resume) => setImmediate(resume));
    this.sliceStartedMs = performance.now();
  }
}
