/**
 * How often a connection may "send a test": a token bucket per connection, `burst` tests
 * at once and one more every `refillMs`. A test is a delivery like any other (it takes the
 * connection's send slots and is retried for an hour when its receiver fails), so without
 * a bound of its own one user's clicks, or a script, could queue hundreds of them.
 *
 * In memory on purpose, as the login limiter: a restart forgiving a few tests is harmless,
 * and a record per refused click would let a client fill the log.
 */
import { LRUCache } from 'lru-cache';

export interface TestSendLimits {
  burst: number;
  refillMs: number;
  /** connections tracked at once (the least recently tested are forgotten, which only forgives) */
  trackedMax: number;
}

/** Five tests at once, then one every 12 s: a person testing a channel never meets it. */
export const TEST_SEND_LIMITS: TestSendLimits = { burst: 5, refillMs: 12_000, trackedMax: 10_000 };

interface Bucket {
  tokens: number;
  updatedMs: number;
}

export class TestSendLimiter {
  private readonly buckets: LRUCache<string, Bucket>;

  constructor(private readonly limits: TestSendLimits = TEST_SEND_LIMITS) {
    this.buckets = new LRUCache({ max: limits.trackedMax });
  }

  /** Counts a test of `connectionId` and returns null, or returns the whole seconds until one is allowed (counting nothing). */
  admit(connectionId: string, nowMs: number): number | null {
    const { burst, refillMs } = this.limits;
    const bucket = this.buckets.get(connectionId) ?? { tokens: burst, updatedMs: nowMs };
    const tokens = Math.min(burst, bucket.tokens + Math.max(0, nowMs - bucket.updatedMs) / refillMs);
    if (tokens < 1) return Math.ceil(((1 - tokens) * refillMs) / 1000);
    this.buckets.set(connectionId, { tokens: tokens - 1, updatedMs: nowMs });
    return null;
  }
}
