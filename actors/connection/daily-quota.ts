/**
 * Accepted job events and the estimated bytes (event-bytes.ts) of every accepted event per
 * UTC day for one connection. Only job events count against DAILY_EVENT_LIMIT: a worker must
 * beat within 6 s to stay online, so counting heartbeats (and queue snapshots) would spend a
 * 10,000-event day on one idle worker; they stay bounded by the byte budget and the worker
 * and queue caps. The day rolls from the receive time carried in each record, and the count
 * is taken from the record's events, so replay after a restart rebuilds the same counters.
 */
import { nextUtcMidnightMs, utcDayNumber } from '../clock.ts';

/**
 * Whether an event, as sent, spends the daily event quota: job events do, worker and queue
 * events do not. Judged on the raw event's `type` so a request can be refused (429) or
 * truncated before its events are validated.
 */
export function countsAgainstQuota(raw: unknown): boolean {
  return typeof raw === 'object' && raw !== null && (raw as { type?: unknown }).type === 'job_state_change';
}

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
