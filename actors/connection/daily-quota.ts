/**
 * Accepted events and their estimated bytes (event-bytes.ts) per UTC day for one
 * connection. The day rolls from the receive time carried in each record, so replay
 * after a restart rebuilds the same counters.
 */
import { nextUtcMidnightMs, utcDayNumber } from '../clock.ts';

export interface Usage {
  used: number;
  /** 0 means unlimited */
  limit: number;
  remaining: number;
  resetAt: string;
}

export interface QuotaSnapshot {
  day: number;
  used: number;
  bytes?: number;
}

export class DailyQuota {
  private day = 0;
  private usedToday = 0;
  private bytesToday = 0;

  constructor(private readonly limit: number) {}

  used(nowMs: number): number {
    return utcDayNumber(nowMs) === this.day ? this.usedToday : 0;
  }

  /** Unlimited quotas report MAX_SAFE_INTEGER so `remaining > 0` checks in SDKs keep working. */
  remaining(nowMs: number): number {
    if (this.limit === 0) return Number.MAX_SAFE_INTEGER;
    return Math.max(0, this.limit - this.used(nowMs));
  }

  bytesUsed(nowMs: number): number {
    return utcDayNumber(nowMs) === this.day ? this.bytesToday : 0;
  }

  record(count: number, bytes: number, atMs: number): void {
    const day = utcDayNumber(atMs);
    if (day !== this.day) {
      this.day = day;
      this.usedToday = 0;
      this.bytesToday = 0;
    }
    this.usedToday += count;
    this.bytesToday += bytes;
  }

  usage(nowMs: number): Usage {
    return {
      used: this.used(nowMs),
      limit: this.limit,
      remaining: this.remaining(nowMs),
      resetAt: new Date(nextUtcMidnightMs(nowMs)).toISOString(),
    };
  }

  toSnapshot(): QuotaSnapshot {
    return { day: this.day, used: this.usedToday, bytes: this.bytesToday };
  }

  /** A snapshot of the previous version has no `bytes`: that day's bytes count from the upgrade on. */
  restore(data: QuotaSnapshot): void {
    this.day = data.day;
    this.usedToday = data.used;
    this.bytesToday = data.bytes ?? 0;
  }
}
