/**
 * The alerts firing now, for the header on every page: polled while the header is on
 * screen (alerts change on the service's evaluation timer, not on a stream event), and
 * reloaded at once by the Alerts page.
 */
import { signal } from '@preact/signals';
import { api } from '../api/client.ts';
import type { AlertsOverview, PublicAlert } from '../api/types.ts';

const POLL_MS = 15_000;

export const firingAlerts = signal<PublicAlert[]>([]);

export async function reloadFiringAlerts(): Promise<void> {
  try {
    firingAlerts.value = (await api<AlertsOverview>('GET', '/api/alerts')).firing;
  } catch {
    // the header keeps what it showed; the page reports its own errors
  }
}

/** Starts polling; returns the stop (one header is on screen at a time). */
export function watchFiringAlerts(): () => void {
  void reloadFiringAlerts();
  const timer = setInterval(() => void reloadFiringAlerts(), POLL_MS);
  return () => clearInterval(timer);
}
