/**
 * Frames at their limits: the smallest frame (no payload) at the very end of a file,
 * a tail too short to hold a header, and the sequence numbers and offsets a frame
 * refuses. frame.test.ts covers the ordinary damage; these are the off-by-ones.
 */
import { describe, expect, test } from 'bun:test';
import { FRAME_HEADER_BYTES, LOG_MAGIC, encodeFrame, findIntactFrame, readFrame } from '../../persistence/frame.ts';
import { InvariantViolation } from '../../persistence/invariant.ts';

const empty = new Uint8Array(0);

describe('frame edges', () => {
  test('given a frame with no payload, then it is exactly a header and reads back', () => {
    const frame = encodeFrame(LOG_MAGIC, 3, empty);
    expect(frame.length).toBe(FRAME_HEADER_BYTES);
    expect(readFrame(frame, 0, LOG_MAGIC, 3)).toEqual({ kind: 'ok', seq: 3, payload: empty, nextOffset: FRAME_HEADER_BYTES });
  });

  test('given damage and then an empty frame ending exactly at the end of the bytes, then the search finds it', () => {
    const bytes = new Uint8Array([0x00, 0x01, 0x02, ...encodeFrame(LOG_MAGIC, 9, empty)]);
    expect(findIntactFrame(bytes, 0, LOG_MAGIC)).toBe(3);
    expect(findIntactFrame(bytes, 4, LOG_MAGIC)).toBeUndefined();
  });

  test('given a short tail that cannot start a frame, then bad-magic reports the bytes found, zero-padded', () => {
    expect(readFrame(new Uint8Array([0x12, 0x34]), 0, LOG_MAGIC)).toEqual({ kind: 'bad-magic', offset: 0, foundMagic: 0x1234_0000 });
    expect(readFrame(new Uint8Array([0xff, 0xfe, 0xfd, 0xfc, 0x01]), 0, LOG_MAGIC)).toEqual({ kind: 'bad-magic', offset: 0, foundMagic: 0xfffe_fdfc });
  });

  test('given a short tail that starts like a frame, then it is a short read', () => {
    const start = encodeFrame(LOG_MAGIC, 1, empty).subarray(0, 6);
    expect(readFrame(start, 0, LOG_MAGIC)).toEqual({ kind: 'short-read', offset: 0, bytesNeeded: FRAME_HEADER_BYTES, bytesAvailable: 6 });
  });

  test('a seq that is negative, fractional or beyond 2^53 is refused, and so is an offset outside the bytes', () => {
    for (const seq of [-1, 1.5, 2 ** 53]) expect(() => encodeFrame(LOG_MAGIC, seq, empty)).toThrow(InvariantViolation);
    expect(() => encodeFrame(LOG_MAGIC, 0, empty)).not.toThrow();
    const frame = encodeFrame(LOG_MAGIC, 1, empty);
    expect(() => readFrame(frame, -1, LOG_MAGIC)).toThrow('frame offset -1 outside 20 bytes');
    expect(() => readFrame(frame, frame.length, LOG_MAGIC)).toThrow('frame offset 20 outside 20 bytes');
    expect(() => encodeFrame(LOG_MAGIC, -1, empty)).toThrow('frame sequence -1 is not a safe non-negative integer');
  });
});
