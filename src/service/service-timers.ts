/** How often the service checks whether a snapshot is due and runs retention; tests shorten them. */
export interface ServiceTimers {
  snapshotCheckIntervalMs: number;
  /** Retention runs as a logged record, so replay removes exactly what the live run removed. */
  retentionIntervalMs: number;
}

export const SERVICE_TIMERS: ServiceTimers = { snapshotCheckIntervalMs: 5_000, retentionIntervalMs: 60_000 };
