/**
 * Accepted events per UTC day for one connection. The day rolls from the receive time
 * carried in each record, so replay after a restart rebuilds the same counter.
 */
import { nextUtcMidnightMs, utcDayNumber } from '../clock.ts';

export interface Usage {
  used: number;
  /** 0 means unlimited */
  limit: number;
  remaining: number;
  resetAt: string;
}

export class DailyQuota {
  private day = 0;
  private usedToday = 0;

  constructor(private readonly limit: number) {}

  used(nowMs: number): number {
    return utcDayNumber(nowMs) === this.day ? this.usedToday : 0;
  }

  /** Unlimited quotas report MAX_SAFE_INTEGER so `remaining > 0` checks in SDKs keep working. */
  remaining(nowMs: number): number {
    if (this.limit === 0) return Number.MAX_SAFE_INTEGER;
    return Math.max(0, this.limit - this.used(nowMs));
  }

  record(count: number, atMs: number): void {
    const day = utcDayNumber(atMs);
    if (day !== this.day) {
      this.day = day;
      this.usedToday = 0;
    }
    this.usedToday += count;
  }

  usage(nowMs: number): Usage {
    return {
      used: this.used(nowMs),
      limit: this.limit,
      remaining: this.remaining(nowMs),
      resetAt: new Date(nextUtcMidnightMs(nowMs)).toISOString(),
    };
  }

  toSnapshot(): { day: number; used: number } {
    return { day: this.day, used: this.usedToday };
  }

  restore(data: { day: number; used: number }): void {
    this.day = data.day;
    this.usedToday = data.used;
  }
}
