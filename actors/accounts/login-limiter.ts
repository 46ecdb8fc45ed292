/**
 * Login throttle with three layers for unknown devices, and a bucket of its own for each
 * known one:
 *
 * - per (client address, email): the first `pairFailuresFree` failures are free, then each
 *   further attempt waits an exponential backoff (base, 2x base, ... capped). Only that
 *   address is slowed for that email; the owner at any other address is unaffected.
 * - per client address, across emails: at most `addressFailuresMax` failures per window
 *   (stops one address spraying a password over many emails).
 * - per email, across addresses: a token bucket (`emailBurst` attempts, one more every
 *   `emailRefillMs`). It slows a distributed guesser to one guess per refill interval.
 *   Under a distributed guesser that keeps the bucket empty, an unknown device waits
 *   its turn with the guesser's attempts.
 * - a known device (one holding a device cookie from an earlier successful login of
 *   this email, see device-cookie.ts) skips the three layers above: it is judged only by
 *   its own count, `deviceFailuresMax` failures per `deviceWindowMs`, so a guesser
 *   without the cookie cannot make the owner wait. Past its count the device is locked
 *   out for the rest of the window, which means it is treated as unknown (the layers
 *   above apply), not refused outright: a stolen cookie buys a few guesses, no more.
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
  /** failures a known device may make per window before it counts as unknown */
  deviceFailuresMax: number;
  deviceWindowMs: number;
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
  deviceFailuresMax: 10,
  deviceWindowMs: 15 * 60_000,
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
  /** present when the attempt was admitted on a known device's own count */
  readonly device?: string;
}

export class LoginLimiter {
  private readonly pairs: LRUCache<string, PairState>;
  private readonly addresses: LRUCache<string, WindowCount>;
  private readonly emails: LRUCache<string, Bucket>;
  private readonly devices: LRUCache<string, WindowCount>;

  constructor(private readonly options: LoginLimiterOptions = LOGIN_LIMITER_DEFAULTS) {
    // Time is judged by the injected clock below; the caches only bound how many keys are kept.
    this.pairs = new LRUCache({ max: options.trackedKeysMax });
    this.addresses = new LRUCache({ max: options.trackedKeysMax });
    this.emails = new LRUCache({ max: options.trackedKeysMax });
    this.devices = new LRUCache({ max: options.trackedKeysMax });
  }

  /**
   * Admits and counts an attempt, or returns the whole seconds to wait (counting nothing).
   * Synchronous, so check and count cannot be interleaved by another request. `device`:
   * the id of a device cookie already verified to name this email.
   */
  admit(address: string, email: string, nowMs: number, device?: string): LoginAttempt | { waitSeconds: number } {
    if (device !== undefined) {
      const own = this.currentDeviceWindow(device, nowMs);
      if (own.count < this.options.deviceFailuresMax) {
        own.count++;
        this.devices.set(device, own);
        return { address, email, device };
      }
    }
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
    if (attempt.device !== undefined) {
      this.devices.delete(attempt.device);
      return;
    }
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

  private currentDeviceWindow(device: string, nowMs: number): WindowCount {
    const window = this.devices.get(device);
    if (window === undefined || nowMs - window.windowStartMs >= this.options.deviceWindowMs) return { count: 0, windowStartMs: nowMs };
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
