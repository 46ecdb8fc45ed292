/**
 * What each connection's agents said they can do (`GET /api/capabilities`), for the
 * controls the dashboard judges itself (the bulk bar and the rows of the job list): loaded
 * with the session and again when a page asks; the detail pages' own `actions` and
 * `controls` come from the service.
 */
import { signal } from '@preact/signals';
import type { SupportOf } from '../../../actors/connection/action-availability.ts';
import { api } from '../api/client.ts';
import type { PublicCapabilities } from '../api/types.ts';

export const capabilities = signal<PublicCapabilities[]>([]);

export async function loadCapabilities(): Promise<void> {
  try {
    capabilities.value = (await api<{ data: PublicCapabilities[] }>('GET', '/api/capabilities')).data;
  } catch {
    // without them the controls the agents did not report stay disabled, saying so
  }
}

/** What the agents of one connection said, as the availability rules read it. */
export function supportIn(connectionId: string): SupportOf {
  return (framework, type) => {
    const report = capabilities.value.find((each) => each.connectionId === connectionId && each.framework === framework);
    if (report === undefined) return undefined;
    return report.controls[type] ?? { supported: false, reason: `this agent version (${report.agentVersion}) does not know '${type}'` };
  };
}
