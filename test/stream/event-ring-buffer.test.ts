import { describe, expect, test } from 'bun:test';
import { EventRingBuffer, type BufferedEvent } from '../../actors/stream/event-ring-buffer.ts';

// Ids only need to sort like ULIDs do: fixed width, increasing.
function bufferedEvent(sequenceNumber: number): BufferedEvent {
  return { id: `id-${String(sequenceNumber).padStart(4, '0')}`, bytes: new Uint8Array([sequenceNumber]) };
}

function idsOf(events: readonly BufferedEvent[] | undefined): string[] | undefined {
  return events?.map((event) => event.id);
}

describe('EventRingBuffer', () => {
  test('given events within capacity, eventsAfter returns those after the id', () => {
    const buffer = new EventRingBuffer(4, 'id-0000');
    for (let n = 1; n <= 3; n += 1) buffer.append(bufferedEvent(n));

    expect(idsOf(buffer.eventsAfter('id-0001'))).toEqual(['id-0002', 'id-0003']);
    expect(idsOf(buffer.eventsAfter('id-0003'))).toEqual([]);
    expect(idsOf(buffer.eventsAfter('id-0000'))).toEqual(['id-0001', 'id-0002', 'id-0003']);
  });

  test('given an id older than the floor, eventsAfter cannot vouch and returns undefined', () => {
    const buffer = new EventRingBuffer(4, 'id-0005');
    buffer.append(bufferedEvent(6));

    expect(buffer.eventsAfter('id-0004')).toBeUndefined();
  });

  test('given more events than capacity, the oldest fall out and raise the floor', () => {
    const buffer = new EventRingBuffer(3, 'id-0000');
    for (let n = 1; n <= 7; n += 1) buffer.append(bufferedEvent(n));

    expect(buffer.size).toBe(3);
    expect(buffer.eventsAfter('id-0003')).toBeUndefined();
    // id-0004 itself fell out, but everything after it is still here.
    expect(idsOf(buffer.eventsAfter('id-0004'))).toEqual(['id-0005', 'id-0006', 'id-0007']);
    expect(idsOf(buffer.eventsAfter('id-0006'))).toEqual(['id-0007']);
  });

  test('an id between two buffered ids (from another hub) resumes after its position', () => {
    const buffer = new EventRingBuffer(3, 'id-0000');
    buffer.append(bufferedEvent(2));
    buffer.append(bufferedEvent(4));

    expect(idsOf(buffer.eventsAfter('id-0003'))).toEqual(['id-0004']);
  });
});
