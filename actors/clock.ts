/** The outside world's time, injected so actors and tests control it. */
export interface Clock {
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private currentMs: number) {}
  nowMs(): number {
    return this.currentMs;
  }
  set(ms: number): void {
    this.currentMs = ms;
  }
  advance(ms: number): void {
    this.currentMs += ms;
  }
}

const DAY_MS = 86_400_000;

export function nextUtcMidnightMs(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS + DAY_MS;
}

export function utcDayNumber(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
