import { invariant } from './invariant.ts';

/**
 * The frame around every log record and snapshot chunk, so damage is detected rather
 * than read as data:
 *
 *   magic u32 | length u32 | crc32 u32 | seq u64 (high u32, low u32) | payload
 *
 * all big-endian; `length` counts payload bytes; the checksum covers seq and payload,
 * which sit side by side so one crc32 call covers both. A different magic per file kind
 * means a snapshot chunk can never be read as a log record.
 */
export const FRAME_HEADER_BYTES = 20;
export const LOG_MAGIC = 0x4a57_4c47; // "JWLG"
export const SNAPSHOT_MAGIC = 0x4a57_534e; // "JWSN"

const LENGTH_OFFSET = 4;
const CHECKSUM_OFFSET = 8;
const SEQ_OFFSET = 12;
const SEQ_HIGH_FACTOR = 2 ** 32;
const PAYLOAD_BYTES_MAX = 0xffff_ffff;

export type FrameReadOutcome =
  | { kind: 'ok'; seq: number; payload: Uint8Array; nextOffset: number }
  /** The file ends inside this frame: the usual sign of a write torn by a crash. */
  | { kind: 'short-read'; offset: number; bytesNeeded: number; bytesAvailable: number }
  | { kind: 'bad-magic'; offset: number; foundMagic: number }
  | { kind: 'checksum-mismatch'; offset: number; storedChecksum: number; computedChecksum: number }
  /** A whole, intact frame whose sequence number is not the one that must come next. */
  | { kind: 'sequence-gap'; offset: number; expectedSeq: number; foundSeq: number };

export type FrameDamage = Exclude<FrameReadOutcome, { kind: 'ok' }>;

export function encodeFrame(magic: number, seq: number, payload: Uint8Array): Uint8Array {
  invariant(Number.isSafeInteger(seq) && seq >= 0, `frame sequence ${seq} is not a safe non-negative integer`);
  // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: a 4 GiB payload cannot be built in a test; records are bounded far below it
  invariant(payload.length <= PAYLOAD_BYTES_MAX, `frame payload of ${payload.length} bytes does not fit a u32 length`);
  const frame = new Uint8Array(FRAME_HEADER_BYTES + payload.length);
  const view = new DataView(frame.buffer);
  view.setUint32(0, magic);
  view.setUint32(LENGTH_OFFSET, payload.length);
  view.setUint32(SEQ_OFFSET, Math.floor(seq / SEQ_HIGH_FACTOR));
  view.setUint32(SEQ_OFFSET + 4, seq >>> 0);
  frame.set(payload, FRAME_HEADER_BYTES);
  view.setUint32(CHECKSUM_OFFSET, Bun.hash.crc32(frame.subarray(SEQ_OFFSET)));
  return frame;
}

/**
 * Reads the frame that starts at `offset` (which must be inside `bytes`). With
 * `expectedSeq`, an intact frame carrying another sequence number is a `sequence-gap`.
 */
export function readFrame(bytes: Uint8Array, offset: number, magic: number, expectedSeq?: number): FrameReadOutcome {
  invariant(offset >= 0 && offset < bytes.length, `frame offset ${offset} outside ${bytes.length} bytes`);
  const available = bytes.length - offset;
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, available);
  if (available < FRAME_HEADER_BYTES) {
    // Too short to hold a header: torn if what is there could start a frame.
    return startsWithMagicPrefix(bytes.subarray(offset), magic)
      ? { kind: 'short-read', offset, bytesNeeded: FRAME_HEADER_BYTES, bytesAvailable: available }
      : { kind: 'bad-magic', offset, foundMagic: readPartialMagic(bytes.subarray(offset)) };
  }
  const foundMagic = view.getUint32(0);
  if (foundMagic !== magic) return { kind: 'bad-magic', offset, foundMagic };
  const frameBytes = FRAME_HEADER_BYTES + view.getUint32(LENGTH_OFFSET);
  if (frameBytes > available) {
    return { kind: 'short-read', offset, bytesNeeded: frameBytes, bytesAvailable: available };
  }
  const storedChecksum = view.getUint32(CHECKSUM_OFFSET);
  const computedChecksum = Bun.hash.crc32(bytes.subarray(offset + SEQ_OFFSET, offset + frameBytes));
  if (storedChecksum !== computedChecksum) {
    return { kind: 'checksum-mismatch', offset, storedChecksum, computedChecksum };
  }
  const seq = view.getUint32(SEQ_OFFSET) * SEQ_HIGH_FACTOR + view.getUint32(SEQ_OFFSET + 4);
  if (expectedSeq !== undefined && seq !== expectedSeq) {
    return { kind: 'sequence-gap', offset, expectedSeq, foundSeq: seq };
  }
  const payload = bytes.subarray(offset + FRAME_HEADER_BYTES, offset + frameBytes);
  return { kind: 'ok', seq, payload, nextOffset: offset + frameBytes };
}

/**
 * The offset of the first intact frame (magic, length and checksum all agree) at or
 * after `fromOffset`, if any. Recovery uses it to tell a torn tail (nothing intact
 * follows the damage) from damage in the middle (intact records follow and would be lost).
 */
export function findIntactFrame(bytes: Uint8Array, fromOffset: number, magic: number): number | undefined {
  const firstByte = magic >>> 24;
  // Stryker disable next-line ArithmeticOperator: offsets past the end hold no first magic byte, so a longer walk finds nothing more
  for (let offset = fromOffset; offset + FRAME_HEADER_BYTES <= bytes.length; offset++) {
    // Stryker disable next-line ConditionalExpression: a shortcut only; readFrame rejects the same offsets by their magic
    if (bytes[offset] !== firstByte) continue;
    const outcome = readFrame(bytes, offset, magic);
    if (outcome.kind === 'ok') return offset;
  }
  return undefined;
}

export function describeFrameDamage(damage: FrameDamage): string {
  switch (damage.kind) {
    case 'short-read':
      return `short read at offset ${damage.offset} (frame needs ${damage.bytesNeeded} bytes, ${damage.bytesAvailable} remain)`;
    case 'bad-magic':
      return `bad magic 0x${damage.foundMagic.toString(16).padStart(8, '0')} at offset ${damage.offset}`;
    case 'checksum-mismatch':
      return `checksum mismatch at offset ${damage.offset}`;
    case 'sequence-gap':
      return `sequence gap at offset ${damage.offset} (expected seq ${damage.expectedSeq}, found ${damage.foundSeq})`;
  }
}

function startsWithMagicPrefix(tail: Uint8Array, magic: number): boolean {
  for (let index = 0; index < Math.min(tail.length, 4); index++) {
    if (tail[index] !== ((magic >>> (24 - 8 * index)) & 0xff)) return false;
  }
  return true;
}

function readPartialMagic(tail: Uint8Array): number {
  let value = 0;
  for (let index = 0; index < 4; index++) value = value * 256 + (tail[index] ?? 0);
  return value;
}
