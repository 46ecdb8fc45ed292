import { describe, expect, test } from 'bun:test';
import { EventIdSequence } from '../../actors/stream/event-id-sequence.ts';
import { SseMessageReader } from '../support/sse-message-reader.ts';
import { StreamHub, type StreamHubOptions } from '../../actors/stream/stream-hub.ts';
import { subscribeMany } from '../../actors/stream/subscribe-many.ts';

const hubOptions: StreamHubOptions = {
  ringBufferEventsMax: 100,
  ringBufferBytesMax: 1 << 20,
  subscriberBufferBytesMax: 64 * 1024,
  flushIntervalMs: 1,
  keepAliveIntervalMs: 60_000,
};

/** Hubs for `count` tenant connections of one dashboard user. */
function createHubs(count: number, overrides: Partial<StreamHubOptions> = {}): StreamHub[] {
  return Array.from({ length: count }, () => new StreamHub({ ...hubOptions, ...overrides }));
}

function eventIds(messages: readonly { id?: string }[]): (string | undefined)[] {
  return messages.map((message) => message.id);
}

describe('subscribeMany', () => {
  test('delivers the events of every hub on one stream, in publish order', async () => {
    const [first, second, third] = createHubs(3);
    const messages = new SseMessageReader(subscribeMany([first!, second!, third!]).stream);

    const ids = [
      first!.publish('job', { connection: 1 }),
      third!.publish('worker', { connection: 3 }),
      second!.publish('queue', { connection: 2 }),
      first!.publish('job', { connection: 1 }),
    ];

    expect(eventIds(await messages.nextEvents(4))).toEqual(ids);
  });

  test('every hub resumes from the one Last-Event-ID the client sends back', async () => {
    const [first, second, third] = createHubs(3);
    first!.publish('job', {});
    second!.publish('job', {});
    const lastSeen = first!.publish('job', {});
    const missed = [second!.publish('job', {}), third!.publish('job', {}), first!.publish('job', {})];
    const messages = new SseMessageReader(subscribeMany([first!, second!, third!], { lastEventId: lastSeen }).stream);

    const live = second!.publish('job', {});

    expect(eventIds(await messages.nextEvents(4))).toEqual([...missed, live]);
  });

  test('one hub that evicted events after the id resets the whole stream', async () => {
    const [roomy] = createHubs(1);
    const [cramped] = createHubs(1, { ringBufferEventsMax: 2 });
    const lastSeen = roomy!.publish('job', {});
    for (let count = 0; count < 3; count += 1) cramped!.publish('job', {});
    const messages = new SseMessageReader(subscribeMany([roomy!, cramped!], { lastEventId: lastSeen }).stream);

    const live = roomy!.publish('job', {});
    const [reset, next] = await messages.nextEvents(2);

    expect(reset?.event).toBe('reset');
    expect(next?.id).toBe(live);
  });

  test('an id from before a hub existed resets, since that hub cannot vouch for it', async () => {
    const [older] = createHubs(1);
    const lastSeen = older!.publish('job', {});
    const [newer] = createHubs(1);
    const messages = new SseMessageReader(subscribeMany([older!, newer!], { lastEventId: lastSeen }).stream);

    const [reset] = await messages.nextEvents(1);

    expect(reset?.event).toBe('reset');
  });

  test('cancelling removes the subscriber from every hub', async () => {
    const hubs = createHubs(3);
    const reader = subscribeMany(hubs).stream.getReader();
    expect(hubs.map((hub) => hub.subscriberCount)).toEqual([1, 1, 1]);

    await reader.cancel();

    expect(hubs.map((hub) => hub.subscriberCount)).toEqual([0, 0, 0]);
  });

  test('closing one watched hub ends the stream and detaches it from the others', async () => {
    const [deleted, remaining] = createHubs(2);
    let closeCount = 0;
    const messages = new SseMessageReader(subscribeMany([deleted!, remaining!], {
      onClose: () => {
        closeCount += 1;
      },
    }).stream);

    deleted!.close();

    expect((await messages.next())?.retryMs).toBe(3000);
    expect(await messages.next()).toBeUndefined();
    expect(remaining!.subscriberCount).toBe(0);
    expect(closeCount).toBe(1);
  });

  test('the same hub listed twice is watched once', async () => {
    const [hub] = createHubs(1);
    const messages = new SseMessageReader(subscribeMany([hub!, hub!]).stream);

    const ids = [hub!.publish('job', {}), hub!.publish('job', {})];

    expect(hub!.subscriberCount).toBe(1);
    expect(eventIds(await messages.nextEvents(2))).toEqual(ids);
  });

  test('refuses no hubs, and hubs whose ids come from different sequences', () => {
    const [shared] = createHubs(1);
    const [isolated] = createHubs(1, { eventIdSequence: new EventIdSequence() });

    expect(() => subscribeMany([])).toThrow(RangeError);
    expect(() => subscribeMany([shared!, isolated!])).toThrow();
  });
});
