/** How the Metrics page writes its figures. */
import { shortDuration } from '../../lib/time.ts';

export const duration = (ms: number | null): string => (ms === null ? '–' : ms === 0 ? '0' : ms < 1 ? '<1 ms' : shortDuration(ms));
export const percent = (ratio: number | null): string => (ratio === null ? '–' : `${(ratio * 100).toFixed(ratio < 0.1 ? 1 : 0)} %`);
/** Two significant digits under 10, whole numbers above. */
export const amount = (value: number): string => (value === 0 ? '0' : value < 10 ? String(Number(value.toPrecision(2))) : value.toFixed(0));

/** Jobs per minute, or per hour or per day when fewer than one a minute or an hour. */
export function rate(perMinute: number): string {
  if (perMinute === 0 || perMinute >= 1) return `${amount(perMinute)}/min`;
  return perMinute * 60 >= 1 ? `${amount(perMinute * 60)}/h` : `${amount(perMinute * 1440)}/day`;
}

/** A change against the period before, as "+12 %"; null when either side has nothing, or nothing changed. */
export function change(current: number | null, previous: number | null): string | null {
  if (current === null || previous === null || previous === 0 || current === previous) return null;
  const ratio = (current - previous) / previous;
  return `${ratio > 0 ? '+' : ''}${(ratio * 100).toFixed(Math.abs(ratio) < 0.1 ? 1 : 0)} %`;
}
