/**
 * Snapshot chunks as formats 4 to 7 wrote a connection's jobs, made from the current
 * format's: extensions as an array of texts, none of the columns the column list added
 * since (runs added by hand, log line counts, the other texts), and the job table's
 * extension characters instead of its text bytes. Format 9 wrote the columns as now, but
 * without the relation columns (`parentExternalId`, `rootExternalId`: format 10).
 */
import { expect } from 'bun:test';
import type { SnapshotChunk } from '../../actors/engine-snapshot.ts';
import type { JobColumns } from '../../actors/connection/job-columns.ts';

/** The texts of a text column as the current format joins them, one per job (null: none). */
export function textsOf(joined: { bytes: Uint8Array; lengths: Uint8Array }): Array<string | null> {
  let at = 0;
  return Array.from(new Int32Array(Uint8Array.from(joined.lengths).buffer), (length) => {
    if (length < 0) return null;
    const text = Buffer.from(joined.bytes.subarray(at, at + length)).toString('utf8');
    at += length;
    return text;
  });
}

/** A chunk as format 9 wrote its jobs (no relation columns); other chunks as they are, the header saying 9. */
export function withFormatNineJobs(chunk: SnapshotChunk): SnapshotChunk {
  if (chunk.k === 'header') return { ...chunk, version: 9 };
  if (chunk.k !== 'jobColumns') return chunk;
  const { parentExternalId, rootExternalId, ...columns } = chunk.columns as JobColumns;
  expect([parentExternalId, rootExternalId].every((column) => column instanceof Uint8Array)).toBe(true);
  return { ...chunk, columns: columns as JobColumns };
}

/** A chunk as format `version` (4 to 7) wrote its jobs; other chunks as they are, the header saying `version`. */
export function withFormatSevenJobs(current: SnapshotChunk, version: number): SnapshotChunk {
  const chunk = withFormatNineJobs(current);
  if (chunk.k === 'header') return { ...chunk, version };
  if (chunk.k === 'connection') {
    const { textBytes, ...sizes } = chunk.jobTable!;
    return { ...chunk, jobTable: { ...sizes, extensionBytes: textBytes?.extensions ?? 0 } };
  }
  if (chunk.k !== 'jobColumns') return chunk;
  const { texts, logLines, manualRetries, ...columns } = chunk.columns as JobColumns;
  expect([logLines, manualRetries].every((column) => column instanceof Uint8Array)).toBe(true);
  return { ...chunk, columns: { ...columns, extensions: textsOf(texts.extensions) } };
}
