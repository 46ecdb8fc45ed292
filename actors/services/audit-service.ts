/**
 * Reading the audit log: the instance admin reads every entry, a team admin the entries of
 * the teams they are an admin of (anyone else is refused by the route's rule). Newest
 * first, in cursor pages like the job list; a cursor names the last entry of its page.
 */
import type { Access } from '../accounts/access.ts';
import type { AuditEntry, AuditOutcome } from '../audit/audit-log.ts';
import { validationError } from '../domain-error.ts';
import type { Engine } from '../engine.ts';

export interface PublicAuditEntry {
  id: string;
  at: string;
  userId: string | null;
  email: string;
  address: string;
  action: string;
  target: string | null;
  teamId: string | null;
  connectionId: string | null;
  outcome: AuditOutcome;
  status: number;
  error: string | null;
}

export interface AuditPage {
  data: PublicAuditEntry[];
  pagination: { nextCursor: string | null; limit: number };
}

export interface AuditFilter {
  teamId?: string;
  userId?: string;
  action?: string;
  outcome?: AuditOutcome;
  cursor?: string;
  limit: number;
}

export class AuditService {
  constructor(private readonly engine: Engine) {}

  list(access: Access, filter: AuditFilter): AuditPage {
    const teamIds = access.isInstanceAdmin ? undefined : new Set(access.teams().filter((grant) => grant.role === 'admin').map((grant) => grant.team.id));
    const { entries, more } = this.engine.audit.query({
      teamIds,
      teamId: filter.teamId,
      userId: filter.userId,
      action: filter.action,
      outcome: filter.outcome,
      before: filter.cursor === undefined ? undefined : decodeCursor(filter.cursor),
      limit: filter.limit,
      nowMs: this.engine.clock.nowMs(),
    });
    const last = entries.at(-1);
    return { data: entries.map(toPublic), pagination: { nextCursor: more && last !== undefined ? auditCursor(last) : null, limit: filter.limit } };
  }
}

function toPublic(entry: AuditEntry): PublicAuditEntry {
  const { atMs, ...rest } = entry;
  return { ...rest, at: new Date(atMs).toISOString() };
}

/** The cursor of the page after `entry` (newest first): the front of shards makes it for a merged page too. */
export function auditCursor(entry: { atMs: number; id: string }): string {
  return Buffer.from(JSON.stringify([entry.atMs, entry.id])).toString('base64url');
}

function decodeCursor(cursor: string): { atMs: number; id: string } {
  try {
    const [atMs, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof atMs === 'number' && Number.isFinite(atMs) && typeof id === 'string') return { atMs, id };
  } catch {
    // not ours: refused below
  }
  throw validationError('cursor', 'is not a cursor of this list');
}
