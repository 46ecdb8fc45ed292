/**
 * Failed-login throttle per email and per client address: after `failuresMax` failures
 * inside `windowMs`, further attempts are refused until the window passes. In memory on
 * purpose: a restart forgiving failures is harmless, and logging them would let an
 * attacker fill the log.
 */
export interface LoginLimiterOptions {
  failuresMax: number;
  windowMs: number;
  trackedKeysMax: number;
}

interface Failures {
  count: number;
  windowStartMs: number;
}

export class LoginLimiter {
  private readonly failures = new Map<string, Failures>();

  constructor(private readonly options: LoginLimiterOptions) {}

  /** Seconds until `keys` may try again, or 0 when allowed. */
  retryAfterSeconds(keys: string[], nowMs: number): number {
    let waitMs = 0;
    for (const key of keys) {
      const entry = this.failures.get(key);
      if (entry === undefined || nowMs - entry.windowStartMs >= this.options.windowMs) continue;
      if (entry.count >= this.options.failuresMax) waitMs = Math.max(waitMs, entry.windowStartMs + this.options.windowMs - nowMs);
    }
    return Math.ceil(waitMs / 1000);
  }

  recordFailure(keys: string[], nowMs: number): void {
    for (const key of keys) {
      const entry = this.failures.get(key);
      if (entry === undefined || nowMs - entry.windowStartMs >= this.options.windowMs) {
        this.failures.delete(key);
        this.failures.set(key, { count: 1, windowStartMs: nowMs });
      } else {
        entry.count++;
      }
    }
    // Insertion order is oldest window first: drop from the front to bound memory.
    while (this.failures.size > this.options.trackedKeysMax) {
      const oldest = this.failures.keys().next().value;
      if (oldest === undefined) break;
      this.failures.delete(oldest);
    }
  }

  recordSuccess(keys: string[]): void {
    for (const key of keys) this.failures.delete(key);
  }
}
