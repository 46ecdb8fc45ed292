/**
 * The alerts firing now, for the header on every page: polled while someone is signed in
 * (alerts change on the service's evaluation timer, not on a stream event), and reloaded
 * at once by the Alerts page after a change.
 */
import { signal } from '@preact/signals';
import { api } from '../api/client.ts';
import type { AlertsOverview, PublicAlert } from '../api/types.ts';

const POLL_MS = 15_000;

export const firingAlerts = signal<PublicAlert[]>([]);

let timer: ReturnType<typeof setInterval> | null = null;
let watchers = 0;

export async function reloadFiringAlerts(): Promise<AlertsOverview | null> {
  try {
    const overview = await api<AlertsOverview>('GET', '/api/alerts');
    firingAlerts.value = overview.firing;
    return overview;
  } catch {
    return null; // the header keeps what it showed; the page reports its own errors
  }
}

/** Starts polling for as long as one header is on screen; returns the stop. */
export function watchFiringAlerts(): () => void {
  watchers++;
  if (timer === null) {
    void reloadFiringAlerts();
    timer = setInterval(() => void reloadFiringAlerts(), POLL_MS);
  }
  return () => {
    watchers--;
    if (watchers === 0 && timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  };
}
