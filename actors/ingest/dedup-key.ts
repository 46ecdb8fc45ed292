/**
 * Duplicate keys from the decisions: job (externalId, state, timestamp, attempt),
 * worker (externalId, state, timestamp), queue (name, timestamp). Timestamps are in
 * milliseconds so `...00Z` and `...00.000Z` are the same event. Built with template
 * strings: this runs twice per event, and Array#join was a measurable share of ingest.
 */
import type { NormalizedEvent } from './normalized-event.ts';

// Decide and evolve ask for the key of the same event object on the live path: the second
// ask gets the string the first built, already flattened and hashed by the Set lookups.
const keys = new WeakMap<NormalizedEvent, string>();

export function dedupKeyOf(event: NormalizedEvent): string {
  let key = keys.get(event);
  if (key === undefined) {
    key = buildKey(event);
    keys.set(event, key);
  }
  return key;
}

function buildKey(event: NormalizedEvent): string {
  switch (event.kind) {
    case 'job':
      return `j\u0000${event.externalId}\u0000${event.state}\u0000${event.atMs}\u0000${event.attempt ?? ''}`;
    case 'worker':
      return `w\u0000${event.externalId}\u0000${event.state}\u0000${event.atMs}`;
    case 'queue':
      return `q\u0000${event.name}\u0000${event.atMs}`;
  }
}
