import { LOG_MAGIC, describeFrameDamage, findIntactFrame, readFrame } from './frame.ts';
import type { FrameDamage } from './frame.ts';
import type { Storage } from './storage.ts';

/**
 * Reading the log segments of a data directory and judging them against a base (the
 * seq of the snapshot recovery would start from, 0 for none). Judging only, no
 * changes: recovery decides what to do with the verdict.
 */
export interface SegmentFile {
  name: string;
  path: string;
  firstSeq: number;
}

/** What one pass over a segment found; independent of any snapshot. */
export interface SegmentScan {
  sizeBytes: number;
  /** Seq of the last intact record, firstSeq - 1 when there is none. */
  lastSeq: number;
  /** Where the intact records end. */
  intactBytes: number;
  damage: { outcome: FrameDamage; intactFrameFollows: boolean } | undefined;
}

export interface TornTail {
  segment: SegmentFile;
  offset: number;
  droppedBytes: number;
  reason: string;
}

export type LogAssessment =
  | {
      condition: 'clean' | 'torn';
      /** Segments holding the records after the base, oldest first. */
      segments: SegmentFile[];
      tornTail: TornTail | undefined;
      /** Seq of the last intact record, or the base when the log holds nothing after it. */
      lastLogSeq: number;
      /** Intact bytes of those segments: what replay reads (its progress lines give a percent of it). */
      intactBytes: number;
    }
  | { condition: 'corrupt'; problem: string; remedy: string };

export async function scanSegment(storage: Storage, segment: SegmentFile): Promise<SegmentScan> {
  const bytes = await storage.readFile(segment.path);
  let offset = 0;
  let expectedSeq = segment.firstSeq;
  while (offset < bytes.length) {
    const outcome = readFrame(bytes, offset, LOG_MAGIC, expectedSeq);
    if (outcome.kind !== 'ok') {
      const intactFrameFollows = findIntactFrame(bytes, offset + 1, LOG_MAGIC) !== undefined;
      return { sizeBytes: bytes.length, lastSeq: expectedSeq - 1, intactBytes: offset, damage: { outcome, intactFrameFollows } };
    }
    offset = outcome.nextOffset;
    expectedSeq += 1;
  }
  return { sizeBytes: bytes.length, lastSeq: expectedSeq - 1, intactBytes: offset, damage: undefined };
}

/**
 * Judges the log for recovery from `baseSeq`:
 * - segments whose successor starts at or before baseSeq + 1 are covered by the base
 *   and ignored, damaged or not;
 * - the remaining segments must follow each other without gaps or overlaps;
 * - damage is forgiven (`torn`) only at the end of the newest segment, when it is a
 *   short read, checksum mismatch or bad magic and no intact frame follows it;
 * - anything else is `corrupt`, with the operator's options spelled out.
 */
export async function assessLog(
  segments: readonly SegmentFile[],
  baseSeq: number,
  scan: (segment: SegmentFile) => Promise<SegmentScan>,
): Promise<LogAssessment> {
  const startIndex = segments.findLastIndex((segment) => segment.firstSeq <= baseSeq + 1);
  const first = segments[0];
  if (first && startIndex < 0) {
    return {
      condition: 'corrupt',
      problem: `records ${baseSeq + 1}..${first.firstSeq - 1} are missing: the oldest log segment ${first.path} starts at seq ${first.firstSeq}`,
      remedy: `restore the missing segment or snapshot from a backup${baseSeq === 0 ? `, or move every log-*.seg out of the directory to start empty` : ''}`,
    };
  }
  const relevant = segments.slice(Math.max(startIndex, 0));
  let expectedSeq: number | undefined;
  let tornTail: TornTail | undefined;
  let intactBytes = 0;
  for (const [index, segment] of relevant.entries()) {
    if (expectedSeq !== undefined && segment.firstSeq !== expectedSeq) {
      return misplacedSegment(segment, expectedSeq, baseSeq, relevant.slice(index));
    }
    const result = await scan(segment);
    const isNewest = index === relevant.length - 1;
    if (result.damage) {
      const { outcome, intactFrameFollows } = result.damage;
      const reason = describeFrameDamage(outcome);
      if (!isNewest || intactFrameFollows || outcome.kind === 'sequence-gap') {
        return damagedSegment(segment, result, reason, relevant.slice(index + 1), isNewest, intactFrameFollows);
      }
      tornTail = { segment, offset: result.intactBytes, droppedBytes: result.sizeBytes - result.intactBytes, reason };
    }
    expectedSeq = result.lastSeq + 1;
    intactBytes += result.intactBytes;
  }
  // Stryker disable next-line ArithmeticOperator: with no segment after the base, max() picks baseSeq whatever the fallback is
  const lastLogSeq = Math.max(baseSeq, (expectedSeq ?? baseSeq + 1) - 1);
  return { condition: tornTail ? 'torn' : 'clean', segments: relevant, tornTail, lastLogSeq, intactBytes };
}

function misplacedSegment(
  segment: SegmentFile,
  expectedSeq: number,
  baseSeq: number,
  fromHereOn: readonly SegmentFile[],
): LogAssessment {
  const later = fromHereOn.map((each) => each.path).join(', ');
  if (segment.firstSeq < expectedSeq) {
    return {
      condition: 'corrupt',
      problem: `log segment ${segment.path} starts at seq ${segment.firstSeq} but the segment before it already holds records up to seq ${expectedSeq - 1}`,
      remedy: `find out which copy is right; to keep the records before it, move ${later} out of the directory (records from seq ${segment.firstSeq} on will be lost)`,
    };
  }
  const missingFrom = Math.max(expectedSeq, baseSeq + 1);
  return {
    condition: 'corrupt',
    problem: `records ${missingFrom}..${segment.firstSeq - 1} are missing: the log jumps to ${segment.path}, which starts at seq ${segment.firstSeq}`,
    remedy: `restore the missing segment from a backup, or move ${later} out of the directory to accept losing every record from seq ${missingFrom} on`,
  };
}

function damagedSegment(
  segment: SegmentFile,
  result: SegmentScan,
  reason: string,
  laterSegments: readonly SegmentFile[],
  isNewest: boolean,
  intactFrameFollows: boolean,
): LogAssessment {
  const where = isNewest
    ? intactFrameFollows
      ? 'intact records follow the damage, so this is not a torn write'
      : 'an intact frame with the wrong sequence number is not a torn write'
    : 'it is not the newest segment, so this is not a torn write';
  const alsoMove = laterSegments.length > 0 ? ` and move ${laterSegments.map((each) => each.path).join(', ')} out of the directory` : '';
  return {
    condition: 'corrupt',
    problem: `log segment ${segment.path} is damaged: ${reason}; ${where}`,
    remedy:
      `restore the file from a backup, or accept losing every record from seq ${result.lastSeq + 1} on: ` +
      `cut the file at the damage (truncate -s ${result.intactBytes} ${segment.path})${alsoMove}`,
  };
}
