/**
 * Login throttle with three layers, none of which lets an attacker lock the owner out:
 *
 * - per (client address, email): the first `pairFailuresFree` failures are free, then each
 *   further attempt waits an exponential backoff (base, 2x base, ... capped). Only that
 *   address is slowed for that email; the owner at any other address is unaffected.
 * - per client address, across emails: at most `addressFailuresMax` failures per window
 *   (stops one address spraying a password over many emails).
 * - per email, across addresses: a token bucket (`emailBurst` attempts, one more every
 *   `emailRefillMs`). It slows a distributed guesser to one guess per refill interval,
 *   and never makes anyone wait longer than that interval.
 *
 * An attempt is counted when it is admitted, before the password is verified, so
 * parallel guesses cannot all pass one check. A success gives back only its own
 * attempt (and clears its own pair): it never erases other emails' failures.
 * Refused attempts count nothing, so hammering a refused key does not extend the wait.
 *
 * In memory on purpose: a restart forgiving failures is harmless, and logging them would
 * let an attacker fill the log. LRUs bound memory against attackers cycling keys.
 */
import { LRUCache } from 'lru-cache';

export interface LoginLimiterOptions {
  pairFailuresFree: number;
  pairBackoffBaseMs: number;
  pairBackoffMaxMs: number;
  /** a pair quiet for this long starts over */
  pairForgetMs: number;
  addressFailuresMax: number;
  addressWindowMs: number;
  emailBurst: number;
  emailRefillMs: number;
  trackedKeysMax: number;
}

export const LOGIN_LIMITER_DEFAULTS: LoginLimiterOptions = {
  pairFailuresFree: 5,
  pairBackoffBaseMs: 1_000,
  pairBackoffMaxMs: 15 * 60_000,
  pairForgetMs: 60 * 60_000,
  addressFailuresMax: 100,
  addressWindowMs: 15 * 60_000,
  emailBurst: 20,
  emailRefillMs: 3_000,
  trackedKeysMax: 100_000,
};

interface PairState {
  failures: number;
  nextAllowedMs: number;
  lastAttemptMs: number;
}

interface WindowCount {
  count: number;
  windowStartMs: number;
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

/** Proof of an admitted attempt, handed back on success. */
export interface LoginAttempt {
  readonly address: string;
  readonly email: string;
}

export class LoginLimiter {
  private readonly pairs: LRUCache<string, PairState>;
  private readonly addresses: LRUCache<string, WindowCount>;
  private readonly emails: LRUCache<string, Bucket>;

  constructor(private readonly options: LoginLimiterOptions = LOGIN_LIMITER_DEFAULTS) {
    // Time is judged by the injected clock below; the caches only bound how many keys are kept.
    this.pairs = new LRUCache({ max: options.trackedKeysMax });
    this.addresses = new LRUCache({ max: options.trackedKeysMax });
    this.emails = new LRUCache({ max: options.trackedKeysMax });
  }

  /**
   * Admits and counts an attempt, or returns the whole seconds to wait (counting nothing).
   * Synchronous, so check and count cannot be interleaved by another request.
   */
  admit(address: string, email: string, nowMs: number): LoginAttempt | { waitSeconds: number } {
    const pair = this.currentPair(address, email, nowMs);
    const window = this.currentWindow(address, nowMs);
    const bucket = this.currentBucket(email, nowMs);
    let waitMs = Math.max(0, pair.nextAllowedMs - nowMs);
    if (window.count >= this.options.addressFailuresMax) waitMs = Math.max(waitMs, window.windowStartMs + this.options.addressWindowMs - nowMs);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: with a whole token left, (1 - tokens) is not positive and the wait it gives is none
    if (bucket.tokens < 1) waitMs = Math.max(waitMs, Math.ceil((1 - bucket.tokens) * this.options.emailRefillMs));
    if (waitMs > 0) return { waitSeconds: Math.ceil(waitMs / 1000) };

    pair.failures++;
    pair.lastAttemptMs = nowMs;
    if (pair.failures >= this.options.pairFailuresFree) {
      const doublings = Math.min(pair.failures - this.options.pairFailuresFree, 40);
      pair.nextAllowedMs = nowMs + Math.min(this.options.pairBackoffBaseMs * 2 ** doublings, this.options.pairBackoffMaxMs);
    }
    window.count++;
    bucket.tokens -= 1;
    this.pairs.set(pairKey(address, email), pair);
    this.addresses.set(address, window);
    this.emails.set(email, bucket);
    return { address, email };
  }

  /** The password was right: this attempt was no guess. Clears its pair and gives back its counts. */
  succeeded(attempt: LoginAttempt): void {
    this.pairs.delete(pairKey(attempt.address, attempt.email));
    const window = this.addresses.get(attempt.address);
    if (window !== undefined && window.count > 0) window.count--;
    const bucket = this.emails.get(attempt.email);
    if (bucket !== undefined) bucket.tokens = Math.min(this.options.emailBurst, bucket.tokens + 1);
  }

  private currentPair(address: string, email: string, nowMs: number): PairState {
    const pair = this.pairs.get(pairKey(address, email));
    if (pair === undefined || nowMs - pair.lastAttemptMs >= this.options.pairForgetMs) return { failures: 0, nextAllowedMs: 0, lastAttemptMs: nowMs };
    return pair;
  }

  private currentWindow(address: string, nowMs: number): WindowCount {
    const window = this.addresses.get(address);
    if (window === undefined || nowMs - window.windowStartMs >= this.options.addressWindowMs) return { count: 0, windowStartMs: nowMs };
    return window;
  }

  private currentBucket(email: string, nowMs: number): Bucket {
    const bucket = this.emails.get(email);
    if (bucket === undefined) return { tokens: this.options.emailBurst, updatedMs: nowMs };
    const refilled = Math.max(0, nowMs - bucket.updatedMs) / this.options.emailRefillMs;
    bucket.tokens = Math.min(this.options.emailBurst, bucket.tokens + refilled);
    bucket.updatedMs = nowMs;
    return bucket;
  }
}

function pairKey(address: string, email: string): string {
  return `${address}\u0000${email}`;
}
