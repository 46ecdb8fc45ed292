import { describe, expect, test } from 'bun:test';
import { StreamHub } from '../../actors/stream/stream-hub.ts';
import { SseMessageReader } from '../support/sse-message-reader.ts';

const options = { ringBufferEventsMax: 100, ringBufferBytesMax: 1 << 20, subscriberBufferBytesMax: 1 << 20, flushIntervalMs: 1, keepAliveIntervalMs: 60_000 };

async function firstEvent(hub: StreamHub, lastEventId: string) {
  const reader = new SseMessageReader(hub.subscribe({ lastEventId }).stream);
  const [message] = await reader.nextEvents(1);
  await reader.cancel();
  return message!;
}

describe('a hub nobody watches', () => {
  test('given events skipped while unwatched, when a client resumes from before them, then it gets reset', async () => {
    const hub = new StreamHub(options);
    const seen = hub.publish('job', { n: 1 });
    expect(hub.watched).toBe(false);
    hub.skipUnwatched();
    expect((await firstEvent(hub, seen)).event).toBe('reset');
    hub.close();
  });

  test('given nothing skipped, when a client resumes, then it replays exactly', async () => {
    const hub = new StreamHub(options);
    const seen = hub.publish('job', { n: 1 });
    hub.publish('job', { n: 2 });
    const message = await firstEvent(hub, seen);
    expect(message.event).toBe('job');
    expect(JSON.parse(message.data!)).toEqual({ n: 2 });
    hub.close();
  });

  test('events published after the gap resume normally from an id after it', async () => {
    const hub = new StreamHub(options);
    hub.skipUnwatched();
    const after = hub.publish('job', { n: 3 });
    hub.publish('job', { n: 4 });
    expect(JSON.parse((await firstEvent(hub, after)).data!)).toEqual({ n: 4 });
    hub.close();
  });

  test('skipping frees the buffered events at once rather than on the next publish', () => {
    const hub = new StreamHub(options);
    hub.publish('job', { n: 1 });
    expect(hub.bufferedBytes).toBeGreaterThan(0);
    hub.skipUnwatched();
    expect(hub.bufferedBytes).toBe(0);
    hub.close();
  });
});
