/**
 * A job's progress in words: the fraction as a percentage, and what a progress object says
 * beside it (its stage or message), so a bar is never the only thing shown.
 */

/** "60 %"; null when no fraction is known. */
export function percentText(fraction: number | null): string | null {
  return fraction === null ? null : `${Math.round(fraction * 100)} %`;
}

/** A progress object's words: its `stage`, `step`, `status` or `message` when it has one (text or number), else null. */
export function progressNote(data: unknown): string | null {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return null;
  for (const key of ['stage', 'step', 'status', 'message']) {
    const value = (data as Record<string, unknown>)[key];
    if (typeof value === 'string' || typeof value === 'number') return String(value);
  }
  return null;
}
