/** One ticking clock for the whole page, so relative times and heartbeat ages move together. */
import { signal } from '@preact/signals';
import { TICK_MS } from './time.ts';

export const now = signal(Date.now());
setInterval(() => {
  now.value = Date.now();
}, TICK_MS);

/** Relative or absolute times in lists; the choice is remembered in this browser. */
export const absoluteTimes = signal(localStorage.getItem('jobwatch.absoluteTimes') === '1');
export function toggleAbsoluteTimes(): void {
  absoluteTimes.value = !absoluteTimes.value;
  localStorage.setItem('jobwatch.absoluteTimes', absoluteTimes.value ? '1' : '0');
}
