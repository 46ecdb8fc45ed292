/**
 * Duplicate keys from the decisions: job (externalId, state, timestamp, attempt),
 * worker (externalId, state, timestamp), queue (name, timestamp). Timestamps are in
 * milliseconds so `...00Z` and `...00.000Z` are the same event.
 */
import type { NormalizedEvent } from './normalized-event.ts';

const SEPARATOR = '\u0000';

export function dedupKeyOf(event: NormalizedEvent): string {
  switch (event.kind) {
    case 'job':
      return ['j', event.externalId, event.state, event.atMs, event.attempt ?? ''].join(SEPARATOR);
    case 'worker':
      return ['w', event.externalId, event.state, event.atMs].join(SEPARATOR);
    case 'queue':
      return ['q', event.name, event.atMs].join(SEPARATOR);
  }
}
