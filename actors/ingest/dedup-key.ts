/**
 * Duplicate keys from the decisions: job (externalId, state, timestamp, attempt),
 * worker (externalId, state, timestamp), queue (name, timestamp). Timestamps are in
 * milliseconds so `...00Z` and `...00.000Z` are the same event. Built with template
 * strings: this runs for every event (decide; replay again), and Array#join was a measurable
 * share of ingest.
 */
import type { NormalizedEvent } from './normalized-event.ts';

export function dedupKeyOf(event: NormalizedEvent): string {
  switch (event.kind) {
    case 'job':
      return `j\u0000${event.externalId}\u0000${event.state}\u0000${event.atMs}\u0000${event.attempt ?? ''}`;
    case 'worker':
      return `w\u0000${event.externalId}\u0000${event.state}\u0000${event.atMs}`;
    case 'queue':
      return `q\u0000${event.name}\u0000${event.atMs}`;
  }
}
