import type { EventIdSequence } from './event-id-sequence.ts';
import { planResume, type ResumePlan } from './resume-plan.ts';
import { resetMessageBytes, streamPreambleBytes } from './sse-wire-format.ts';
import type { StreamHub } from './stream-hub.ts';
import { Subscriber, type SubscribeOptions } from './subscriber.ts';

export interface StreamSubscription {
  /** The body of the SSE response. */
  readonly stream: ReadableStream<Uint8Array>;
  /** Ends the stream after what is pending, because what authorized it ended. */
  end(): void;
}

/**
 * One stream carrying the events of several hubs, e.g. every connection a dashboard user
 * owns. A single hub's `subscribe` is the one-hub case of this.
 *
 * Resume: the client sends back one id, the last it saw from whichever hub. Because all
 * hubs draw ids from one strictly increasing sequence and this subscriber receives every
 * hub's events in publish order, each hub is resumed from that same id (see planResume).
 *
 * The byte budget is the smallest of the hubs' budgets. Closing any watched hub ends the
 * whole stream; the client reconnects and resumes the hubs that remain.
 */
export function subscribeMany(hubs: readonly StreamHub[], options: SubscribeOptions = {}): StreamSubscription {
  const watchedHubs = [...new Set(hubs)];
  const eventIdSequence = sharedEventIdSequence(watchedHubs);
  const bufferBytesMax = Math.min(...watchedHubs.map((hub) => hub.subscriberBufferBytesMax));
  const { signal, onClose } = options;

  const closeOnAbort = (): void => subscriber.close('aborted');
  const subscriber: Subscriber = new Subscriber({
    bufferBytesMax,
    onClose: (reason) => {
      for (const hub of watchedHubs) hub.detach(subscriber);
      signal?.removeEventListener('abort', closeOnAbort);
      if (onClose !== undefined) queueMicrotask(() => onClose(reason));
    },
  });

  subscriber.queue(streamPreambleBytes);
  const replayBytesMax = bufferBytesMax - streamPreambleBytes.byteLength;
  queueResumePlan(subscriber, planResume(watchedHubs, eventIdSequence, options.lastEventId, replayBytesMax));
  subscriber.flush();

  if (watchedHubs.some((hub) => hub.isClosed)) {
    subscriber.close('hub-closed');
  } else if (signal?.aborted === true) {
    subscriber.close('aborted');
  } else {
    // Planning and attaching happen in one synchronous step, so no event published in
    // between can be missed or sent twice.
    signal?.addEventListener('abort', closeOnAbort, { once: true });
    for (const hub of watchedHubs) hub.attach(subscriber);
  }
  return { stream: subscriber.stream, end: () => subscriber.close('session-ended') };
}

function queueResumePlan(subscriber: Subscriber, plan: ResumePlan): void {
  switch (plan.kind) {
    case 'live':
      return;
    case 'reset':
      subscriber.queue(resetMessageBytes);
      return;
    case 'replay':
      for (const event of plan.events) subscriber.queue(event.bytes);
      return;
  }
}

function sharedEventIdSequence(hubs: readonly StreamHub[]): EventIdSequence {
  const [firstHub] = hubs;
  if (firstHub === undefined) throw new RangeError('subscribeMany needs at least one hub');
  if (hubs.some((hub) => hub.eventIdSequence !== firstHub.eventIdSequence)) {
    throw new Error('subscribeMany: hubs with different event id sequences cannot be resumed from one id');
  }
  return firstHub.eventIdSequence;
}
