/**
 * Markers: named moments of a connection (a deploy, a configuration change) drawn on every
 * chart of its task metrics. Added and deleted through records like every other change;
 * kept as long as the day tier keeps its buckets, at most MARKERS_PER_CONNECTION_MAX (past
 * it the marker with the oldest time goes).
 */
import { DomainError } from '../domain-error.ts';

export const MARKERS_PER_CONNECTION_MAX = 1_000;
export const MARKER_NAME_LENGTH_MAX = 200;
/** markers one read answers with at most (the newest in its range) */
export const MARKERS_PER_READ_MAX = 500;

export interface Marker {
  id: string;
  name: string;
  /** the moment it marks */
  atMs: number;
  createdAtMs: number;
  /** who added it: a dashboard user (their email) or the connection's API key */
  addedBy: string;
}

export interface MarkerAddedRecord {
  t: 'marker.added';
  connectionId: string;
  marker: Marker;
}

export interface MarkerDeletedRecord {
  t: 'marker.deleted';
  connectionId: string;
  markerId: string;
}

export type MarkerRecord = MarkerAddedRecord | MarkerDeletedRecord;

export const MARKER_RECORD_TYPES = ['marker.added', 'marker.deleted'] as const;

export class MarkerBook {
  /** sorted by time, then id */
  private list: Marker[] = [];

  get size(): number {
    return this.list.length;
  }

  has(id: string): boolean {
    return this.list.some((marker) => marker.id === id);
  }

  decideDelete(connectionId: string, markerId: string): MarkerDeletedRecord {
    if (!this.has(markerId)) throw new DomainError('NOT_FOUND', 'marker not found');
    return { t: 'marker.deleted', connectionId, markerId };
  }

  evolve(record: MarkerRecord): void {
    if (record.t === 'marker.deleted') {
      this.list = this.list.filter((marker) => marker.id !== record.markerId);
      return;
    }
    const at = this.insertionPoint(record.marker);
    this.list.splice(at, 0, { ...record.marker });
    if (this.list.length > MARKERS_PER_CONNECTION_MAX) this.list.shift();
  }

  /** Markers in [fromMs, toMs), oldest first; the newest `limit` when there are more. */
  within(fromMs: number, toMs: number, limit = MARKERS_PER_READ_MAX): Marker[] {
    const inRange = this.list.filter((marker) => marker.atMs >= fromMs && marker.atMs < toMs);
    return inRange.slice(Math.max(0, inRange.length - limit));
  }

  /** Drops markers older than `cutoffMs` (retention's run: the day tier's time). */
  expireBefore(cutoffMs: number): void {
    if (this.list.length > 0 && this.list[0]!.atMs < cutoffMs) this.list = this.list.filter((marker) => marker.atMs >= cutoffMs);
  }

  toSnapshot(): Marker[] {
    return this.list.map((marker) => ({ ...marker }));
  }

  restore(markers: readonly Marker[]): void {
    this.list = markers.map((marker) => ({ ...marker }));
    this.list.sort(compareMarkers);
  }

  private insertionPoint(marker: Marker): number {
    let low = 0;
    let high = this.list.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compareMarkers(this.list[middle]!, marker) <= 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

function compareMarkers(a: Marker, b: Marker): number {
  return a.atMs - b.atMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
