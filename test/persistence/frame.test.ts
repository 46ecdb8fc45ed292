import { describe, expect, test } from 'bun:test';
import { FRAME_HEADER_BYTES, LOG_MAGIC, SNAPSHOT_MAGIC, encodeFrame, findIntactFrame, readFrame } from '../../persistence/frame.ts';
import { decodeValue, encodeValue } from '../../persistence/record-codec.ts';

const record = { kind: 'job.finished', jobId: 'j-1', atMs: 1_700_000_000_000, tags: ['a', 'b'] };

function twoFrames(): { bytes: Uint8Array; secondOffset: number } {
  const first = encodeFrame(LOG_MAGIC, 7, encodeValue(record));
  const second = encodeFrame(LOG_MAGIC, 8, encodeValue({ n: 2 }));
  return { bytes: Buffer.concat([first, second]), secondOffset: first.length };
}

describe('frame', () => {
  test('given an encoded record, when it is read back, then seq and payload round-trip', () => {
    const { bytes, secondOffset } = twoFrames();

    const first = readFrame(bytes, 0, LOG_MAGIC, 7);
    const second = first.kind === 'ok' ? readFrame(bytes, first.nextOffset, LOG_MAGIC, 8) : first;

    expect(first.kind).toBe('ok');
    if (first.kind !== 'ok' || second.kind !== 'ok') return;
    expect(first.seq).toBe(7);
    expect(decodeValue(first.payload)).toEqual(record);
    expect(first.nextOffset).toBe(secondOffset);
    expect(second.nextOffset).toBe(bytes.length);
  });

  test('given a seq beyond 32 bits, when it round-trips, then it keeps every bit', () => {
    const seq = 2 ** 40 + 12_345;
    const outcome = readFrame(encodeFrame(LOG_MAGIC, seq, new Uint8Array([1])), 0, LOG_MAGIC);
    expect(outcome).toMatchObject({ kind: 'ok', seq });
  });

  test('given a frame cut short inside its payload, when read, then the outcome is short-read', () => {
    const frame = encodeFrame(LOG_MAGIC, 1, encodeValue(record));
    const outcome = readFrame(frame.subarray(0, frame.length - 3), 0, LOG_MAGIC);
    expect(outcome).toMatchObject({ kind: 'short-read', offset: 0, bytesNeeded: frame.length, bytesAvailable: frame.length - 3 });
  });

  test('given only the first bytes of a header, when read, then the outcome is short-read', () => {
    const frame = encodeFrame(LOG_MAGIC, 1, encodeValue(record));
    expect(readFrame(frame.subarray(0, 6), 0, LOG_MAGIC).kind).toBe('short-read');
  });

  test('given zeros where a frame should start, when read, then the outcome is bad-magic', () => {
    expect(readFrame(new Uint8Array(FRAME_HEADER_BYTES + 4), 0, LOG_MAGIC)).toMatchObject({ kind: 'bad-magic', foundMagic: 0 });
    expect(readFrame(new Uint8Array(3), 0, LOG_MAGIC).kind).toBe('bad-magic');
  });

  test('given a snapshot frame, when read as a log record, then the outcome is bad-magic', () => {
    const frame = encodeFrame(SNAPSHOT_MAGIC, 1, encodeValue(record));
    expect(readFrame(frame, 0, LOG_MAGIC)).toMatchObject({ kind: 'bad-magic', foundMagic: SNAPSHOT_MAGIC });
  });

  test('given one flipped payload bit, when read, then the outcome is checksum-mismatch', () => {
    const frame = encodeFrame(LOG_MAGIC, 1, encodeValue(record));
    frame[frame.length - 1]! ^= 0x01;
    expect(readFrame(frame, 0, LOG_MAGIC)).toMatchObject({ kind: 'checksum-mismatch', offset: 0 });
  });

  test('given a flipped seq bit, when read, then the checksum catches it', () => {
    const frame = encodeFrame(LOG_MAGIC, 1, encodeValue(record));
    frame[19]! ^= 0x02;
    expect(readFrame(frame, 0, LOG_MAGIC).kind).toBe('checksum-mismatch');
  });

  test('given an intact frame with another seq than expected, when read, then the outcome is sequence-gap', () => {
    const frame = encodeFrame(LOG_MAGIC, 9, encodeValue(record));
    expect(readFrame(frame, 0, LOG_MAGIC, 8)).toMatchObject({ kind: 'sequence-gap', expectedSeq: 8, foundSeq: 9 });
  });

  test('given damage followed by an intact frame, when searching, then the intact frame is found; given none, nothing is', () => {
    const { bytes, secondOffset } = twoFrames();
    bytes[5]! ^= 0xff;

    expect(findIntactFrame(bytes, 1, LOG_MAGIC)).toBe(secondOffset);
    expect(findIntactFrame(bytes.subarray(0, bytes.length - 1), 1, LOG_MAGIC)).toBeUndefined();
  });
});
