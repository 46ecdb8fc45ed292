/**
 * A metrics snapshot that this code did not write: corrupt, or from an incompatible
 * version. Recovery decides what to do with it; metrics never guess at partial data.
 */
export class InvalidMetricsSnapshotError extends Error {
  override readonly name = 'InvalidMetricsSnapshotError';

  constructor(problem: string) {
    super(`invalid metrics snapshot: ${problem}`);
  }
}
