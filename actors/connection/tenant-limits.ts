/**
 * Limits that keep one tenant (connection) from hurting the others: every count and
 * byte a client controls is bounded per connection. Configured in src/config.ts; tests
 * and tools that build a ConnectionActor by hand may leave them out and get these.
 */
export interface TenantLimits {
  /** distinct queues kept per connection; an event naming one more is refused */
  queuesPerConnectionMax: number;
  /** distinct workers kept per connection; an event from one more is refused */
  workersPerConnectionMax: number;
  /** estimated bytes of retained jobs (see job-bytes.ts); 0 = unlimited */
  connectionMemoryBytesMax: number;
  /** estimated bytes of accepted events per UTC day (see event-bytes.ts); 0 = unlimited */
  dailyIngestBytesMax: number;
  /** how far an event's timestamps may run ahead of the server clock */
  clockSkewToleranceMs: number;
}

const MB = 1024 * 1024;

export const TENANT_LIMIT_DEFAULTS: TenantLimits = {
  queuesPerConnectionMax: 1_000,
  workersPerConnectionMax: 1_000,
  connectionMemoryBytesMax: 1024 * MB,
  dailyIngestBytesMax: 256 * MB,
  clockSkewToleranceMs: 300_000,
};

export function tenantLimitsOf(limits: Partial<TenantLimits>): TenantLimits {
  return {
    queuesPerConnectionMax: limits.queuesPerConnectionMax ?? TENANT_LIMIT_DEFAULTS.queuesPerConnectionMax,
    workersPerConnectionMax: limits.workersPerConnectionMax ?? TENANT_LIMIT_DEFAULTS.workersPerConnectionMax,
    connectionMemoryBytesMax: limits.connectionMemoryBytesMax ?? TENANT_LIMIT_DEFAULTS.connectionMemoryBytesMax,
    dailyIngestBytesMax: limits.dailyIngestBytesMax ?? TENANT_LIMIT_DEFAULTS.dailyIngestBytesMax,
    clockSkewToleranceMs: limits.clockSkewToleranceMs ?? TENANT_LIMIT_DEFAULTS.clockSkewToleranceMs,
  };
}
