/**
 * Single-use links that set a password (account-records.ts, `PasswordLink`): at most one
 * per user (a new one replaces the old), at most `PENDING_LINKS_MAX` waiting in all, and
 * none past its time. Expired links are dropped as records are applied, by the time in the
 * record, so a replay drops the same ones.
 */
import { DomainError } from '../domain-error.ts';
import type { PasswordLink } from './account-records.ts';

export const PENDING_LINKS_MAX = 1_000;

export class PasswordLinks {
  private readonly byToken = new Map<string, PasswordLink>();
  private readonly byUser = new Map<string, PasswordLink>();

  /** The link of a token's hash when it is still good at `nowMs`. */
  valid(tokenHash: string, nowMs: number): PasswordLink | undefined {
    const link = this.byToken.get(tokenHash);
    return link === undefined || link.expiresAtMs <= nowMs ? undefined : link;
  }

  /** The user's waiting link, if it is still good. */
  ofUser(userId: string, nowMs: number): PasswordLink | undefined {
    const link = this.byUser.get(userId);
    return link === undefined || link.expiresAtMs <= nowMs ? undefined : link;
  }

  decideCreate(link: PasswordLink): PasswordLink {
    this.dropExpired(link.createdAtMs);
    if (!this.byUser.has(link.userId) && this.byToken.size >= PENDING_LINKS_MAX) {
      throw new DomainError('CONFLICT', `${PENDING_LINKS_MAX} invitations and password resets are waiting, the most there can be; wait for some to be used or to expire`);
    }
    return link;
  }

  add(link: PasswordLink): void {
    this.dropExpired(link.createdAtMs);
    this.removeOfUser(link.userId);
    this.byToken.set(link.tokenHash, link);
    this.byUser.set(link.userId, link);
  }

  removeOfUser(userId: string): void {
    const link = this.byUser.get(userId);
    if (link === undefined) return;
    this.byToken.delete(link.tokenHash);
    this.byUser.delete(userId);
  }

  get size(): number {
    return this.byToken.size;
  }

  toSnapshot(): PasswordLink[] {
    return [...this.byToken.values()];
  }

  restore(links: readonly PasswordLink[]): void {
    for (const link of links) {
      this.byToken.set(link.tokenHash, link);
      this.byUser.set(link.userId, link);
    }
  }

  private dropExpired(nowMs: number): void {
    for (const link of [...this.byToken.values()]) if (link.expiresAtMs <= nowMs) this.removeOfUser(link.userId);
  }
}
