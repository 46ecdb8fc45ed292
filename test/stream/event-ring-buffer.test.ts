import { describe, expect, test } from 'bun:test';
import { EventRingBuffer, type BufferedEvent } from '../../actors/stream/event-ring-buffer.ts';

// Ids only need to sort like ULIDs do: fixed width, increasing.
function bufferedEvent(sequenceNumber: number): BufferedEvent {
  return { id: `id-${String(sequenceNumber).padStart(4, '0')}`, bytes: new Uint8Array([sequenceNumber]) };
}

/** Large enough that only the event count bounds the buffer. */
const anyBytes = 1 << 20;

function eventOfSize(sequenceNumber: number, byteLength: number): BufferedEvent {
  return { id: bufferedEvent(sequenceNumber).id, bytes: new Uint8Array(byteLength) };
}

function idsOf(events: readonly BufferedEvent[] | undefined): string[] | undefined {
  return events?.map((event) => event.id);
}

describe('EventRingBuffer', () => {
  test('given events within capacity, eventsAfter returns those after the id', () => {
    const buffer = new EventRingBuffer(4, anyBytes, 'id-0000');
    for (let n = 1; n <= 3; n += 1) buffer.append(bufferedEvent(n));

    expect(idsOf(buffer.eventsAfter('id-0001'))).toEqual(['id-0002', 'id-0003']);
    expect(idsOf(buffer.eventsAfter('id-0003'))).toEqual([]);
    expect(idsOf(buffer.eventsAfter('id-0000'))).toEqual(['id-0001', 'id-0002', 'id-0003']);
  });

  test('given an id older than the floor, eventsAfter cannot vouch and returns undefined', () => {
    const buffer = new EventRingBuffer(4, anyBytes, 'id-0005');
    buffer.append(bufferedEvent(6));

    expect(buffer.eventsAfter('id-0004')).toBeUndefined();
  });

  test('given more events than capacity, the oldest fall out and raise the floor', () => {
    const buffer = new EventRingBuffer(3, anyBytes, 'id-0000');
    for (let n = 1; n <= 7; n += 1) buffer.append(bufferedEvent(n));

    expect(buffer.size).toBe(3);
    expect(buffer.eventsAfter('id-0003')).toBeUndefined();
    // id-0004 itself fell out, but everything after it is still here.
    expect(idsOf(buffer.eventsAfter('id-0004'))).toEqual(['id-0005', 'id-0006', 'id-0007']);
    expect(idsOf(buffer.eventsAfter('id-0006'))).toEqual(['id-0007']);
  });

  test('an id between two buffered ids (from another hub) resumes after its position', () => {
    const buffer = new EventRingBuffer(3, anyBytes, 'id-0000');
    buffer.append(bufferedEvent(2));
    buffer.append(bufferedEvent(4));

    expect(idsOf(buffer.eventsAfter('id-0003'))).toEqual(['id-0004']);
  });

  test('given events over the byte capacity, the oldest fall out and raise the floor as with the count', () => {
    const buffer = new EventRingBuffer(10, 100, 'id-0000');
    for (let n = 1; n <= 5; n += 1) buffer.append(eventOfSize(n, 30));

    expect(buffer.size).toBe(3);
    expect(buffer.byteSize).toBe(90);
    expect(buffer.eventsAfter('id-0001')).toBeUndefined();
    expect(idsOf(buffer.eventsAfter('id-0002'))).toEqual(['id-0003', 'id-0004', 'id-0005']);
  });

  test('one large event pushes out as many small ones as it needs room for', () => {
    const buffer = new EventRingBuffer(10, 100, 'id-0000');
    for (let n = 1; n <= 4; n += 1) buffer.append(eventOfSize(n, 25));
    buffer.append(eventOfSize(5, 60));

    expect(buffer.byteSize).toBe(85);
    expect(idsOf(buffer.eventsAfter('id-0003'))).toEqual(['id-0004', 'id-0005']);
    expect(buffer.eventsAfter('id-0002')).toBeUndefined();
  });

  test('an event larger than the byte capacity is not kept, and no id before it can be resumed', () => {
    const buffer = new EventRingBuffer(10, 100, 'id-0000');
    buffer.append(eventOfSize(1, 30));
    buffer.append(eventOfSize(2, 101));

    expect(buffer.size).toBe(0);
    expect(buffer.byteSize).toBe(0);
    expect(buffer.eventsAfter('id-0001')).toBeUndefined();
    expect(idsOf(buffer.eventsAfter('id-0002'))).toEqual([]);
    buffer.append(eventOfSize(3, 100));
    expect(idsOf(buffer.eventsAfter('id-0002'))).toEqual(['id-0003']);
  });
});
