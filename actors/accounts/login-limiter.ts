/**
 * Failed-login throttle per email and per client address: after `failuresMax` failures
 * inside `windowMs`, further attempts are refused until the window passes. An LRU with a
 * time to live bounds memory against attackers cycling through emails and addresses,
 * dropping the least recently failing keys first. In memory on purpose: a restart
 * forgiving failures is harmless, and logging them would let an attacker fill the log.
 */
import { LRUCache } from 'lru-cache';

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
  private readonly failures: LRUCache<string, Failures>;

  constructor(private readonly options: LoginLimiterOptions) {
    // Windows are judged by the injected clock below; the cache only bounds how many keys are kept.
    this.failures = new LRUCache<string, Failures>({ max: options.trackedKeysMax });
  }

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
      if (entry === undefined || nowMs - entry.windowStartMs >= this.options.windowMs) this.failures.set(key, { count: 1, windowStartMs: nowMs });
      else entry.count++;
    }
  }

  recordSuccess(keys: string[]): void {
    for (const key of keys) this.failures.delete(key);
  }
}
