/**
 * Names of the files in a data directory. Sequence numbers are zero-padded to 20
 * digits (enough for any u64) so a plain name sort is a sort by sequence.
 *
 *   log-<first seq>.seg        a log segment; holds records from <first seq> on
 *   snapshot-<seq>.snap        a complete snapshot of the state after record <seq>
 *   snapshot-<seq>.tmp         a snapshot being written; never read by recovery
 */
const SEQ_DIGITS = 20;
const DATA_FILE_PATTERN = /^(log|snapshot)-(\d{20})\.(seg|snap|tmp)$/;

export type DataFileKind = 'segment' | 'snapshot' | 'snapshot-temp';

export interface DataFileName {
  kind: DataFileKind;
  name: string;
  seq: number;
}

export function segmentFileName(firstSeq: number): string {
  return `log-${padSeq(firstSeq)}.seg`;
}

export function snapshotFileName(seq: number): string {
  return `snapshot-${padSeq(seq)}.snap`;
}

export function snapshotTempFileName(seq: number): string {
  return `snapshot-${padSeq(seq)}.tmp`;
}

export function parseDataFileName(name: string): DataFileName | undefined {
  const match = DATA_FILE_PATTERN.exec(name);
  if (!match) return undefined;
  const [, prefix, digits, extension] = match;
  const seq = Number(digits);
  if (!Number.isSafeInteger(seq)) return undefined;
  if (prefix === 'log' && extension === 'seg') return { kind: 'segment', name, seq };
  if (prefix === 'snapshot' && extension === 'snap') return { kind: 'snapshot', name, seq };
  if (prefix === 'snapshot' && extension === 'tmp') return { kind: 'snapshot-temp', name, seq };
  return undefined;
}

function padSeq(seq: number): string {
  return String(seq).padStart(SEQ_DIGITS, '0');
}
