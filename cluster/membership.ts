/**
 * Which nodes are in the cluster: bucket jobwatch_nodes, one key per node holding
 * `{ node, url, keeps }` (keeps: the partitions it keeps now, so a writer knows when the node
 * it hands a partition to is ready for it), written again every LEASE_MS / 4. A node is live while this node has
 * seen its key change revision within LEASE_MS on its own clock (the same rule as a lease,
 * so no clock agreement is needed); a clean stop deletes the key, which every watcher sees
 * at once. The bucket's max_age removes the keys of nodes that died long ago.
 *
 * Every change of the live set is logged (joined, left, gone), so a partition that moves
 * has its reason in the log.
 */
import type { KV } from '@nats-io/kv';
import { describeError } from '../persistence/errors.ts';
import { renewalIntervalMs } from './lease.ts';
import { WatchedBucket } from './watched-bucket.ts';

export interface Member {
  node: string;
  url: string;
  /** the partitions the node keeps, applied and current, as of its last refresh; absent from a node that does not say */
  keeps?: string[];
  /** the jobs held per partition it keeps (placement by size weighs partitions by them); absent from a node that does not say */
  weights?: Record<string, number>;
}

export interface MembershipOptions {
  kv: KV;
  node: string;
  url: string;
  leaseMs: number;
  log: (line: string) => void;
  /** what this node keeps now, written with its key at every refresh */
  keeps?: () => string[];
  /** the jobs held per partition kept here, written with its key at every refresh */
  weights?: () => Record<string, number>;
  /** after a node's key is written or deleted; a node going silent is noticed by `live()` as time passes */
  onChange?: () => void;
}

/** How long `join` waits for its own key to come back through the watch before going on without it. */
const JOIN_SEEN_WITHIN_MS = 10_000;

export class Membership {
  private readonly timer: ReturnType<typeof setInterval>;
  private refreshing = false;
  private refreshFailing = false;
  /** Since when this node's own writes to the bucket have been getting through (see reachableSinceMs). */
  private reachableSince = performance.now();
  private leaving = false;
  private reported = new Map<string, string>(); // node -> url, as last logged
  private watched!: WatchedBucket;

  private constructor(private readonly options: MembershipOptions) {
    this.timer = setInterval(() => void this.refresh(), renewalIntervalMs(options.leaseMs));
  }

  /** Writes this node's key and resolves once the watch shows it, i.e. with every member known then in view. */
  static async join(options: MembershipOptions): Promise<Membership> {
    const membership = new Membership(options);
    try {
      membership.watched = await WatchedBucket.open(options.kv, 'the nodes bucket', options.log, () => options.onChange?.());
      const revision = await options.kv.put(memberKey(options.node), membership.ownKey());
      const seen = await Promise.race([membership.watched.caughtUpTo(revision).then(() => true), Bun.sleep(JOIN_SEEN_WITHIN_MS).then(() => false)]);
      if (!seen) options.log(`joined as ${options.node}, but the nodes bucket's watch has not shown it within ${JOIN_SEEN_WITHIN_MS} ms`);
    } catch (error) {
      clearInterval(membership.timer);
      membership.watched?.stop();
      throw error;
    }
    options.log(`joined the cluster as ${options.node} (${options.url})`);
    membership.live();
    return membership;
  }

  /**
   * The nodes that look live before this node joins (it recovers what it will keep before
   * it joins, so that nobody hands it a partition while it is still recovering): those whose
   * key was written within a lease of the newest key, judged on the NATS servers' timestamps
   * of the keys, not on this node's clock. A node that died less than a lease before the
   * newest write still counts; the watch after joining corrects that (what this node keeps
   * is taken up or let go then).
   */
  static async liveBeforeJoining(kv: KV, leaseMs: number): Promise<string[]> {
    const written: Array<{ member: Member; atMs: number }> = [];
    for await (const key of await kv.keys()) {
      const entry = await kv.get(key);
      if (entry === null || entry.operation !== 'PUT') continue;
      const member = decodeMember(entry.string());
      if (member !== null) written.push({ member, atMs: entry.created.getTime() });
    }
    const newestMs = Math.max(...written.map(({ atMs }) => atMs));
    return written.filter(({ atMs }) => newestMs - atMs < leaseMs).map(({ member }) => member.node);
  }

  /**
   * Since when this node itself has been reaching NATS (its key refreshed on time); now while
   * it is not. Silence is only evidence of another node's death while the observer could have
   * heard from it: after a NATS election, or any outage of its own, every key looks unchanged
   * for as long as the outage lasted, and counting that time would declare healthy nodes gone
   * and take leases their renewals are about to refresh. So a key's unchanged time is counted
   * from this moment at the earliest, here and for the leases (partition-ownership.ts).
   */
  get reachableSinceMs(): number {
    return this.refreshFailing ? performance.now() : this.reachableSince;
  }

  /** The live nodes, sorted by id; logs who joined or went since the last call. */
  live(): Member[] {
    const nowMs = performance.now();
    const members: Member[] = [];
    const gone = new Map<string, string>(this.reported);
    for (const [key, observed] of this.watched.entries()) {
      const { entry } = observed;
      if (entry.operation !== 'PUT') {
        const node = nodeOfKey(key);
        if (this.reported.has(node)) this.report(node, null, 'left (its key was deleted by a clean stop)');
        gone.delete(node);
        continue;
      }
      const member = decodeMember(entry.string());
      if (member === null) continue;
      if (nowMs - Math.max(observed.sinceMs, this.reachableSinceMs) >= this.options.leaseMs) {
        if (this.reported.has(member.node)) this.report(member.node, null, `gone: its key was not refreshed for ${this.options.leaseMs} ms`);
        gone.delete(member.node);
        continue;
      }
      gone.delete(member.node);
      members.push(member);
      if (this.reported.get(member.node) !== member.url) this.report(member.node, member.url, `joined (${member.url})`);
    }
    // a key max_age removed, or a watch that reopened without it
    for (const node of gone.keys()) this.report(node, null, 'gone: its key disappeared');
    return members.sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  }

  /** Writes this node's key now instead of at the next refresh (what it keeps changed). */
  announce(): void {
    void this.refresh();
  }

  /** A clean stop: no more refreshes, and the key is deleted so every node sees this one gone at once. */
  async leave(): Promise<void> {
    if (this.leaving) return;
    this.leaving = true;
    clearInterval(this.timer);
    try {
      await this.options.kv.delete(memberKey(this.options.node));
      this.options.log(`left the cluster (${this.options.node})`);
    } catch (error) {
      this.options.log(`could not delete this node's key (${describeError(error)}); the others see it gone after ${this.options.leaseMs} ms`);
    } finally {
      this.watched.stop();
    }
  }

  private ownKey(): string {
    const { node, url, keeps, weights } = this.options;
    return JSON.stringify({ node, url, ...(keeps === undefined ? {} : { keeps: keeps() }), ...(weights === undefined ? {} : { weights: weights() }) } satisfies Member);
  }

  private report(node: string, url: string | null, what: string): void {
    if (url === null) this.reported.delete(node);
    else this.reported.set(node, url);
    this.options.log(`node ${node} ${what}`);
  }

  private async refresh(): Promise<void> {
    if (this.refreshing || this.leaving) return;
    this.refreshing = true;
    const startedMs = performance.now();
    try {
      await this.options.kv.put(memberKey(this.options.node), this.ownKey());
      if (this.refreshFailing) this.options.log('refreshing this node\'s key works again');
      // a refresh that failed, or that took longer than the refresh interval (NATS was not answering), was an outage
      if (this.refreshFailing || performance.now() - startedMs > renewalIntervalMs(this.options.leaseMs)) this.reachableSince = performance.now();
      this.refreshFailing = false;
    } catch (error) {
      if (!this.refreshFailing) this.options.log(`refreshing this node's key failed (${describeError(error)}); retrying`);
      this.refreshFailing = true;
    } finally {
      this.refreshing = false;
    }
  }
}

/**
 * Node ids (host:port by default) may hold characters a key may not: everything but
 * letters, digits, `-` and `_` is written as `=` and its code in hex, so distinct ids
 * stay distinct keys.
 */
export function memberKey(node: string): string {
  return `n.${node.replace(/[^A-Za-z0-9_-]/g, (char) => `=${char.codePointAt(0)!.toString(16)}=`)}`;
}

function nodeOfKey(key: string): string {
  return key.slice(2).replace(/=([0-9a-f]+)=/g, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)));
}

function decodeMember(text: string): Member | null {
  try {
    const value = JSON.parse(text) as Partial<Record<keyof Member, unknown>>;
    if (typeof value.node !== 'string' || typeof value.url !== 'string') return null;
    const keeps = Array.isArray(value.keeps) && value.keeps.every((key) => typeof key === 'string') ? (value.keeps as string[]) : undefined;
    const weights = weightsOf(value.weights);
    return { node: value.node, url: value.url, ...(keeps === undefined ? {} : { keeps }), ...(weights === undefined ? {} : { weights }) };
  } catch {
    return null;
  }
}

/** A member's weights if they are a record of non-negative counts; undefined otherwise (it says nothing of weights). */
function weightsOf(value: unknown): Record<string, number> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const entries = Object.entries(value as Record<string, unknown>);
  if (!entries.every(([, count]) => typeof count === 'number' && Number.isFinite(count) && count >= 0)) return undefined;
  return Object.fromEntries(entries) as Record<string, number>;
}
