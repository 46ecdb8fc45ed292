import type { EventIdSequence } from './event-id-sequence.ts';
import type { BufferedEvent } from './event-ring-buffer.ts';

/** What a new subscription sends before live events. */
export type ResumePlan =
  | { readonly kind: 'live' } // no Last-Event-ID: nothing to catch up on
  | { readonly kind: 'reset' } // events were lost: the client must refetch
  | { readonly kind: 'replay'; readonly events: readonly BufferedEvent[] };

export interface ResumableSource {
  eventsAfter(id: string): BufferedEvent[] | undefined;
}

/**
 * Plans the catch-up for a client that last saw `lastEventId`, across every hub it
 * watches. Each hub is resumed from the same id: ids come from one process-wide strictly
 * increasing sequence and a subscriber receives events in publish order, so having seen
 * `lastEventId` means having seen every earlier event of every watched hub, and nothing
 * later. Resume is all or nothing: if any hub cannot replay everything after the id, or
 * the replay would not fit in the subscriber's byte budget, the whole stream resets.
 */
export function planResume(
  sources: readonly ResumableSource[],
  eventIdSequence: EventIdSequence,
  lastEventId: string | undefined,
  replayBytesMax: number,
): ResumePlan {
  if (lastEventId === undefined) return { kind: 'live' };
  // An id this process never issued (garbage, or from before a restart) cannot be placed.
  if (!eventIdSequence.hasIssued(lastEventId)) return { kind: 'reset' };

  const events: BufferedEvent[] = [];
  for (const source of sources) {
    const missed = source.eventsAfter(lastEventId);
    if (missed === undefined) return { kind: 'reset' };
    events.push(...missed);
  }
  if (sources.length > 1) events.sort((left, right) => (left.id < right.id ? -1 : 1));

  let replayBytes = 0;
  for (const event of events) replayBytes += event.bytes.byteLength;
  // Replaying more than the budget would cut the client off before it could read it all,
  // and it would reconnect into the same replay again.
  if (replayBytes > replayBytesMax) return { kind: 'reset' };
  return { kind: 'replay', events };
}
