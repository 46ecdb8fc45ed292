import { describe, expect, test } from 'bun:test';
import { EventIdSequence, isCanonicalUlid } from '../../actors/stream/event-id-sequence.ts';
import { SseMessageReader } from '../support/sse-message-reader.ts';
import { StreamHub, type StreamHubOptions } from '../../actors/stream/stream-hub.ts';
import { SubscriberTooSlowError, type SubscriberCloseReason } from '../../actors/stream/subscriber.ts';
import { subscribeMany } from '../../actors/stream/subscribe-many.ts';

// Small intervals so tests wait on delivery, never on production timings.
const hubOptions: StreamHubOptions = {
  ringBufferEventsMax: 100,
  ringBufferBytesMax: 1 << 20,
  subscriberBufferBytesMax: 64 * 1024,
  flushIntervalMs: 1,
  keepAliveIntervalMs: 60_000,
};

function createHub(overrides: Partial<StreamHubOptions> = {}): StreamHub {
  return new StreamHub({ ...hubOptions, ...overrides });
}

/** An onClose callback that records every call, and a promise of the first reason. */
function closeRecorder(): { onClose: (reason: SubscriberCloseReason) => void; reasons: SubscriberCloseReason[]; closed: Promise<SubscriberCloseReason> } {
  const reasons: SubscriberCloseReason[] = [];
  let resolveClosed: (reason: SubscriberCloseReason) => void = () => {};
  const closed = new Promise<SubscriberCloseReason>((resolve) => {
    resolveClosed = resolve;
  });
  return {
    reasons,
    closed,
    onClose: (reason) => {
      reasons.push(reason);
      resolveClosed(reason);
    },
  };
}

function publishJobs(hub: StreamHub, count: number): string[] {
  return Array.from({ length: count }, (_, index) => hub.publish('job', { id: `job-${index}`, state: 'active' }));
}

function eventIds(messages: readonly { id?: string }[]): (string | undefined)[] {
  return messages.map((message) => message.id);
}

const utf8 = new TextDecoder();

describe('StreamHub wire format', () => {
  test('the first chunk of every stream is retry: 3000', async () => {
    const reader = createHub().subscribe().stream.getReader();

    const first = await reader.read();

    expect(utf8.decode(first.value)).toBe('retry: 3000\n\n');
  });

  test('a published event arrives with the exact wire shape and a ULID id', async () => {
    const hub = createHub();
    const messages = new SseMessageReader(hub.subscribe().stream);

    const id = hub.publish('worker', { name: 'celery@host', status: 'online' });
    const [message] = await messages.nextEvents(1);

    expect(isCanonicalUlid(id)).toBe(true);
    expect(message?.text).toBe(`id: ${id}\nevent: worker\ndata: {"name":"celery@host","status":"online"}\n\n`);
  });

  test('ids strictly increase even when the clock does not move', () => {
    const frozenAtMs = 1_700_000_000_000;
    const hub = createHub({ now: () => frozenAtMs, eventIdSequence: new EventIdSequence() });

    const ids = publishJobs(hub, 1000);

    const timeParts = new Set(ids.map((id) => id.slice(0, 10)));
    expect(timeParts.size).toBe(1);
    for (let index = 1; index < ids.length; index += 1) expect(ids[index]! > ids[index - 1]!).toBe(true);
  });

  test('events published in one burst reach a subscriber as one chunk, in order', async () => {
    const hub = createHub();
    const reader = hub.subscribe().stream.getReader();
    await reader.read(); // retry

    const ids = publishJobs(hub, 50);
    const chunk = utf8.decode((await reader.read()).value);

    expect([...chunk.matchAll(/^id: (.*)$/gm)].map((match) => match[1])).toEqual(ids);
  });

  test('data without a JSON form is refused', () => {
    expect(() => createHub().publish('job', undefined)).toThrow(TypeError);
  });
});

describe('StreamHub resume', () => {
  test('without Last-Event-ID only live events are sent', async () => {
    const hub = createHub();
    publishJobs(hub, 3);
    const messages = new SseMessageReader(hub.subscribe().stream);

    const liveId = hub.publish('queue', { name: 'default' });

    expect(eventIds(await messages.nextEvents(1))).toEqual([liveId]);
  });

  test('a buffered Last-Event-ID replays exactly the events after it, then live ones', async () => {
    const hub = createHub();
    const ids = publishJobs(hub, 5);
    const messages = new SseMessageReader(hub.subscribe({ lastEventId: ids[1] }).stream);

    const liveId = hub.publish('job', { id: 'live' });

    expect(eventIds(await messages.nextEvents(4))).toEqual([ids[2], ids[3], ids[4], liveId]);
  });

  test('the newest id as Last-Event-ID replays nothing', async () => {
    const hub = createHub();
    const ids = publishJobs(hub, 3);
    const messages = new SseMessageReader(hub.subscribe({ lastEventId: ids[2] }).stream);

    const liveId = hub.publish('job', { id: 'live' });

    expect(eventIds(await messages.nextEvents(1))).toEqual([liveId]);
  });

  test('an id that fell out of the ring buffer gets event: reset, then live events', async () => {
    const hub = createHub({ ringBufferEventsMax: 3 });
    const ids = publishJobs(hub, 5);
    const messages = new SseMessageReader(hub.subscribe({ lastEventId: ids[0] }).stream);

    const liveId = hub.publish('job', { id: 'live' });
    const [reset, live] = await messages.nextEvents(2);

    expect(reset?.text).toBe('event: reset\ndata: {}\n\n');
    expect(live?.id).toBe(liveId);
  });

  test('an id that fell out because of the byte bound gets event: reset; the next one still replays', async () => {
    const probe = createHub();
    probe.publish('job', { id: 'job-0', state: 'active' });
    const eventBytes = probe.bufferedBytes; // every event below encodes to this length
    const hub = createHub({ ringBufferEventsMax: 100, ringBufferBytesMax: 3 * eventBytes });
    const ids = publishJobs(hub, 5);

    const resetMessages = new SseMessageReader(hub.subscribe({ lastEventId: ids[0] }).stream);
    const replayMessages = new SseMessageReader(hub.subscribe({ lastEventId: ids[1] }).stream);

    expect(hub.bufferedBytes).toBe(3 * eventBytes);
    expect((await resetMessages.nextEvents(1))[0]?.event).toBe('reset');
    expect(eventIds(await replayMessages.nextEvents(3))).toEqual([ids[2], ids[3], ids[4]]);
  });

  test.each(['not-a-ulid', '7ZZZZZZZZZZZZZZZZZZZZZZZZZ', '01arz3ndektsv4rrffq69g5fav'])(
    'an id this process never issued (%s) gets event: reset',
    async (lastEventId) => {
      const hub = createHub();
      publishJobs(hub, 2);
      const messages = new SseMessageReader(hub.subscribe({ lastEventId }).stream);

      const [reset] = await messages.nextEvents(1);

      expect(reset?.event).toBe('reset');
    },
  );

  test('a replay larger than the subscriber byte budget becomes a reset', async () => {
    const hub = createHub({ subscriberBufferBytesMax: 1024 });
    const ids = publishJobs(hub, 30); // about 2.4 KB of events
    const messages = new SseMessageReader(hub.subscribe({ lastEventId: ids[0] }).stream);

    const [reset] = await messages.nextEvents(1);

    expect(reset?.event).toBe('reset');
  });
});

describe('StreamHub subscriber lifecycle', () => {
  test('an idle stream receives a keep-alive comment', async () => {
    const messages = new SseMessageReader(createHub({ keepAliveIntervalMs: 5 }).subscribe().stream);

    const keepAlive = await messages.nextMatching((message) => message.comment !== undefined);

    expect(keepAlive.text).toBe(': keep-alive\n\n');
  });

  test('cancelling the reader removes the subscriber and fires onClose once', async () => {
    const hub = createHub();
    const recorder = closeRecorder();
    const reader = hub.subscribe({ onClose: recorder.onClose }).stream.getReader();
    expect(hub.subscriberCount).toBe(1);

    await reader.cancel();

    expect(hub.subscriberCount).toBe(0);
    expect(await recorder.closed).toBe('cancelled');
    hub.close();
    await Bun.sleep(0);
    expect(recorder.reasons).toEqual(['cancelled']);
  });

  test('aborting the signal removes the subscriber, ends its stream and fires onClose once', async () => {
    const hub = createHub();
    const abort = new AbortController();
    const recorder = closeRecorder();
    const messages = new SseMessageReader(hub.subscribe({ signal: abort.signal, onClose: recorder.onClose }).stream);

    abort.abort();

    expect(hub.subscriberCount).toBe(0);
    expect(await recorder.closed).toBe('aborted');
    expect((await messages.next())?.retryMs).toBe(3000);
    expect(await messages.next()).toBeUndefined();
    expect(recorder.reasons).toEqual(['aborted']);
  });

  test('a signal that already aborted yields a stream that has ended', async () => {
    const hub = createHub();
    const recorder = closeRecorder();

    hub.subscribe({ signal: AbortSignal.abort(), onClose: recorder.onClose });

    expect(hub.subscriberCount).toBe(0);
    expect(await recorder.closed).toBe('aborted');
  });

  test('a subscriber that never reads is cut off at its byte budget; a reading one gets everything', async () => {
    const hub = createHub({ subscriberBufferBytesMax: 4096 });
    const stalled = closeRecorder();
    const stalledReader = hub.subscribe({ onClose: stalled.onClose }).stream.getReader();
    const messages = new SseMessageReader(hub.subscribe().stream);

    // Bursts well under the budget, each awaited by the reading subscriber, so only the
    // stalled one can fall behind.
    const publishedIds: string[] = [];
    const receivedIds: (string | undefined)[] = [];
    for (let burst = 0; burst < 20; burst += 1) {
      publishedIds.push(...publishJobs(hub, 10));
      receivedIds.push(...eventIds(await messages.nextEvents(10)));
    }

    expect(receivedIds).toEqual(publishedIds);
    expect(await stalled.closed).toBe('too-slow');
    expect(hub.subscriberCount).toBe(1);
    await expect(stalledReader.read()).rejects.toBeInstanceOf(SubscriberTooSlowError);
  });

  test('publish returns at once for 10k events while a subscriber is stalled', () => {
    const hub = createHub({ subscriberBufferBytesMax: 256 * 1024 });
    const stalled = closeRecorder();
    hub.subscribe({ onClose: stalled.onClose });

    const ids = publishJobs(hub, 10_000);

    expect(new Set(ids).size).toBe(10_000);
    expect(stalled.reasons).toEqual([]); // onClose runs in a microtask...
    expect(hub.subscriberCount).toBe(0); // ...but the stalled subscriber is already gone
  });

  test('close() delivers pending events, ends every stream, and refuses later publishes', async () => {
    const hub = createHub();
    const recorder = closeRecorder();
    const messages = new SseMessageReader(hub.subscribe({ onClose: recorder.onClose }).stream);
    const ids = publishJobs(hub, 2);

    hub.close();

    expect(eventIds(await messages.nextEvents(2))).toEqual(ids);
    expect(await messages.next()).toBeUndefined();
    expect(await recorder.closed).toBe('hub-closed');
    expect(hub.subscriberCount).toBe(0);
    expect(() => hub.publish('job', {})).toThrow();
  });
});

describe('StreamHub adaptive flushing', () => {
  test('after a quiet interval an event goes out in the turn that published it; while busy, at most one flush per interval', async () => {
    // an interval no test waits for: the first event must not need it, the second must
    const hub = createHub({ flushIntervalMs: 60_000 });
    const reader = hub.subscribe().stream.getReader();
    expect(utf8.decode((await reader.read()).value)).toBe('retry: 3000\n\n');

    const [first, alsoFirst] = publishJobs(hub, 2);
    const chunk = utf8.decode((await reader.read()).value);
    // both events of the turn in one chunk
    expect(chunk).toContain(`id: ${first}\n`);
    expect(chunk).toContain(`id: ${alsoFirst}\n`);

    hub.publish('job', { id: 'busy', state: 'active' });
    const pending = reader.read();
    const early = await Promise.race([pending.then(() => 'delivered'), Bun.sleep(200).then(() => 'waiting')]);
    expect(early).toBe('waiting');
    hub.close(); // delivers what is pending
    expect(utf8.decode((await pending).value)).toContain('"id":"busy"');
  });
});

describe('StreamHub shared chunks', () => {
  /** Reads past the preamble chunk and returns the next chunk. */
  async function nextAfterPreamble(reader: { read(): Promise<{ value?: Uint8Array }> }): Promise<Uint8Array> {
    await reader.read();
    return (await reader.read()).value!;
  }

  test('subscribers with exactly the same pending events get one joined chunk; one with more pending gets its own, with all of it', async () => {
    const hub = createHub();
    const first = hub.subscribe().stream.getReader();
    const second = hub.subscribe().stream.getReader();
    hub.publish('job', { id: 'before' }); // both flush this one together, once their preambles are read
    const [a1, b1] = await Promise.all([nextAfterPreamble(first), nextAfterPreamble(second)]);
    expect(a1).toBe(b1);

    const resumedAfter = hub.publish('job', { id: 'one' });
    const late = hub.subscribe({ lastEventId: resumedAfter }).stream.getReader(); // attaches mid-run
    hub.publish('job', { id: 'two' });
    const [a2, b2] = await Promise.all([first.read(), second.read()]);
    expect(a2.value).toBe(b2.value!);
    expect(utf8.decode(a2.value)).toContain('"id":"one"');
    expect(utf8.decode(a2.value)).toContain('"id":"two"');
    const lateChunk = await nextAfterPreamble(late);
    expect(lateChunk).not.toBe(a2.value!);
    expect(utf8.decode(lateChunk)).not.toContain('"id":"one"');
    expect(utf8.decode(lateChunk)).toContain('"id":"two"');
  });

  test('a subscriber of two hubs whose pending events mix both never gets either hub\'s shared chunk', async () => {
    const a = createHub();
    const b = createHub();
    const watcher = a.subscribe().stream.getReader();
    a.publish('job', { id: 'a0' }); // in a's run, before the next subscriber exists
    const both = subscribeMany([a, b], {}).stream.getReader();
    b.publish('job', { id: 'b1' });
    a.publish('job', { id: 'a1' }); // a's run is now [a0, a1]; both holds [b1, a1]: same length, other events
    const chunk = utf8.decode(await nextAfterPreamble(both));
    expect(chunk).toContain('"id":"b1"');
    expect(chunk).toContain('"id":"a1"');
    expect(chunk).not.toContain('"id":"a0"');
    expect(utf8.decode(await nextAfterPreamble(watcher))).toContain('"id":"a0"');
  });
});
