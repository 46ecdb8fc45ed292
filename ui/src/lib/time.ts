/** Time shown two ways: relative ("12 s ago") for scanning, absolute (local, with ms) for detail. */

export function relativeTime(iso: string, nowMs: number): string {
  const deltaMs = nowMs - Date.parse(iso);
  // under a second either way (clocks of browser and workers differ a little) reads as now
  if (Math.abs(deltaMs) < 1000) return 'now';
  const future = deltaMs < 0;
  const text = shortDuration(Math.abs(deltaMs));
  return future ? `in ${text}` : `${text} ago`;
}

export function absoluteTime(iso: string): string {
  const date = new Date(iso);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`
  );
}

/** 850 ms, 4.2 s, 3 min 5 s, 2 h 10 min, 3 d 4 h: two units at most. */
export function shortDuration(ms: number): string {
  if (ms < 1000) return ms < 1 && ms > 0 ? '<1 ms' : `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 10) return `${(Math.floor(seconds * 10) / 10).toFixed(1)} s`;
  if (seconds < 60) return `${Math.floor(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  // seconds matter for the first minutes only
  if (minutes < 10) return `${minutes} min${Math.floor(seconds % 60) ? ` ${Math.floor(seconds % 60)} s` : ''}`;
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
  const days = Math.floor(hours / 24);
  return `${days} d${hours % 24 ? ` ${hours % 24} h` : ''}`;
}

/** The real-time "now" that relative times and heartbeat ages follow. */
export const TICK_MS = 1000;
