/**
 * Keeps the thread busy for `ms`: work that takes a known least time, so a test can check
 * that a reported duration covers it (a lower bound, never a speed).
 */
export function spend(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}
