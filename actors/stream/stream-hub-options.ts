import type { EventIdSequence } from './event-id-sequence.ts';

export interface StreamHubOptions {
  /** Events kept for Last-Event-ID resume... */
  ringBufferEventsMax: number;
  /** ...and their encoded bytes at most; the older events go first when either is reached. */
  ringBufferBytesMax: number;
  /** Bytes a subscriber may have waiting for its consumer before it is cut off. */
  subscriberBufferBytesMax: number;
  /**
   * Shortest time between two flushes to a subscriber while events keep coming (10-25 ms);
   * after a quiet interval an event is flushed at the end of the turn that published it.
   */
  flushIntervalMs: number;
  /** Period of the comment line sent to idle streams (15 s in production). */
  keepAliveIntervalMs: number;
  /**
   * Clock for the time part of event ids; Date.now by default. The id sequence never goes
   * back, so a clock ahead of real time drags every later id of that sequence with it.
   */
  now?: () => number;
  /**
   * Source of event ids; the process-wide sequence by default. Hubs that one subscription
   * watches together must share it, so only tests that need an isolated clock pass one.
   */
  eventIdSequence?: EventIdSequence;
}

export function assertValidStreamHubOptions(options: StreamHubOptions): void {
  const limits = {
    ringBufferEventsMax: options.ringBufferEventsMax,
    ringBufferBytesMax: options.ringBufferBytesMax,
    subscriberBufferBytesMax: options.subscriberBufferBytesMax,
    flushIntervalMs: options.flushIntervalMs,
    keepAliveIntervalMs: options.keepAliveIntervalMs,
  };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(`StreamHub option ${name} must be a positive integer, got ${value}`);
    }
  }
}
