/**
 * The audit log: who did what, when, from where, on what, and how it ended (one entry per
 * change a person asked for, allowed or not). Entries are records (`audit.recorded`), so
 * they are durable, replayed and in snapshots like every other change.
 *
 * Bounded two ways, both by the entries' own times so that every node (and a replay)
 * keeps the same ones whatever order it applied them in: at most `entriesMax`, the oldest
 * (by time, then id) dropped first; and none older than `retentionMs` before the newest
 * entry seen. A read also leaves out what is older than the retention before now.
 *
 * In cluster mode an entry travels with the change it describes (`via`: the connection
 * whose partition carried it, or none for the accounts partition), and each partition's
 * snapshot holds the entries that came through it.
 */
import { inPartition, type PartitionSelector } from '../partition-of.ts';

export type AuditOutcome = 'success' | 'denied' | 'failed';

export interface AuditEntry {
  id: string;
  atMs: number;
  /** the signed-in user, or null (a sign-in that failed) */
  userId: string | null;
  /** the user's email then, or the email a sign-in named, or `api key` for a change made with a connection's API key (a marker) */
  email: string;
  /** the client address (TRUSTED_PROXIES decides which) */
  address: string;
  /** the route's audit action (`job.revoke`, `member.add`, ...: src/http/access-rules.ts) */
  action: string;
  /** what it was done to: an id, or a summary such as `3 jobs` */
  target: string | null;
  teamId: string | null;
  connectionId: string | null;
  outcome: AuditOutcome;
  /** the HTTP status answered */
  status: number;
  /** the error code and message of a refusal or failure */
  error: string | null;
}

/** An entry as stored: with the connection whose partition carried it (null: the accounts partition). */
export interface StoredAuditEntry {
  entry: AuditEntry;
  via: string | null;
}

export interface AuditRecord {
  t: 'audit.recorded';
  entry: AuditEntry;
  /** present when the change was written to its connection's partition: the entry goes there too */
  connectionId?: string;
}

export interface AuditLimits {
  retentionMs: number;
  entriesMax: number;
}

export const AUDIT_DEFAULTS: AuditLimits = { retentionMs: 90 * 86_400_000, entriesMax: 100_000 };

export interface AuditQuery {
  /** entries of these teams only (a team admin's); undefined: every entry (the instance admin) */
  teamIds?: ReadonlySet<string>;
  teamId?: string;
  userId?: string;
  action?: string;
  outcome?: AuditOutcome;
  /** entries before this one (the last of the previous page), newest first */
  before?: { atMs: number; id: string };
  limit: number;
  nowMs: number;
}

export class AuditLog {
  /** ascending by (atMs, id); entries before `start` are dropped and compacted away later */
  private entries: StoredAuditEntry[] = [];
  private start = 0;
  private newestMs = -Infinity;

  constructor(private readonly limits: AuditLimits = AUDIT_DEFAULTS) {}

  get size(): number {
    return this.entries.length - this.start;
  }

  evolve(record: AuditRecord): void {
    this.insert({ entry: record.entry, via: record.connectionId ?? null });
  }

  /** Newest first, filtered; at most `limit`, and whether more follow. */
  query(query: AuditQuery): { entries: AuditEntry[]; more: boolean } {
    const oldestKept = query.nowMs - this.limits.retentionMs;
    const found: AuditEntry[] = [];
    for (let index = this.entries.length - 1; index >= this.start; index--) {
      const { entry } = this.entries[index]!;
      if (entry.atMs < oldestKept) break;
      if (query.before !== undefined && compare(entry, query.before) >= 0) continue;
      if (!matches(entry, query)) continue;
      if (found.length === query.limit) return { entries: found, more: true };
      found.push(entry);
    }
    return { entries: found, more: false };
  }

  /**
   * Drops the entries that came through the partitions of connections `dropped` names (cluster
   * mode: a partition this node no longer keeps; its keepers have them). Returns how many.
   */
  dropVia(dropped: (connectionId: string) => boolean): number {
    const before = this.size;
    this.entries = this.entries.slice(this.start).filter(({ via }) => via === null || !dropped(via));
    this.start = 0;
    return before - this.size;
  }

  /** The entries a snapshot of this scope holds: those that came through its partitions (all of them without a scope). */
  toSnapshot(scope?: { accounts: boolean; connections: PartitionSelector | 'none' }): StoredAuditEntry[] {
    const kept = this.entries.slice(this.start);
    if (scope === undefined) return kept;
    return kept.filter(({ via }) => (via === null ? scope.accounts : scope.connections !== 'none' && inPartition(via, scope.connections)));
  }

  restore(entries: readonly StoredAuditEntry[]): void {
    for (const stored of entries) this.insert(stored);
  }

  private insert(stored: StoredAuditEntry): void {
    let at = this.entries.length;
    // entries arrive in time order but for a few in flight together: search from the end
    while (at > this.start && compare(this.entries[at - 1]!.entry, stored.entry) > 0) at--;
    if (at > this.start && this.entries[at - 1]!.entry.id === stored.entry.id) return; // a replay of one already kept
    this.entries.splice(at, 0, stored);
    this.newestMs = Math.max(this.newestMs, stored.entry.atMs);
    this.dropBeyondBounds();
  }

  private dropBeyondBounds(): void {
    const oldestKept = this.newestMs - this.limits.retentionMs;
    while (this.start < this.entries.length && (this.size > this.limits.entriesMax || this.entries[this.start]!.entry.atMs < oldestKept)) this.start++;
    if (this.start > 1_024 && this.start * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.start);
      this.start = 0;
    }
  }
}

function compare(a: { atMs: number; id: string }, b: { atMs: number; id: string }): number {
  return a.atMs - b.atMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function matches(entry: AuditEntry, query: AuditQuery): boolean {
  if (query.teamIds !== undefined && (entry.teamId === null || !query.teamIds.has(entry.teamId))) return false;
  if (query.teamId !== undefined && entry.teamId !== query.teamId) return false;
  if (query.userId !== undefined && entry.userId !== query.userId) return false;
  if (query.action !== undefined && entry.action !== query.action) return false;
  return query.outcome === undefined || entry.outcome === query.outcome;
}
