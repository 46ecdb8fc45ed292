/**
 * How one cluster node vouches for a request it forwards to another: the client as the
 * forwarding node saw it (address, and the host and scheme it addressed) in one header,
 * signed with HMAC-SHA256 keyed by CLUSTER_SECRET over the method, the path with its
 * query, that client and a timestamp. The receiving node believes the client only with a
 * valid signature younger than FORWARD_SIGNATURE_MAX_AGE_MS; anything else is a request
 * from its peer like any other (its X-Forwarded headers count only under TRUSTED_PROXIES).
 *
 * A forward may also carry a signed scope (cross-node reads, src/http/cluster-reads.ts): the
 * partitions the receiving node answers a read for, the instant a merged read is made as of,
 * and for an internal call the SHA-256 of its body, so that none of them can be set by a client
 * or a signed header be replayed with another body.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const FORWARD_HEADER = 'x-jobwatch-forward';
/** A signed forward older (or further in the future) than this is refused: a captured one cannot be replayed later. */
export const FORWARD_SIGNATURE_MAX_AGE_MS = 30_000;

export interface ForwardedClient {
  /** The client's address as the forwarding node resolved it (its own TRUSTED_PROXIES applied). */
  address: string;
  /** Host and scheme the client addressed, for the cross-site guard and the cookie's Secure flag. */
  host: string;
  https: boolean;
}

/** What a forwarding node asks of the receiving one beyond passing the request on. */
export interface ForwardScope {
  /** Answer the read for the connections of these partitions only (of `partitionCount`). */
  partitions?: readonly number[];
  partitionCount?: number;
  /** The read is merged with others': add each item's merge detail, reading as of this instant (src/shards/merge-detail.ts). */
  mergeNowMs?: number;
  /** An internal call: the SHA-256 (hex) of its body. */
  bodySha256?: string;
}

export type VerifiedForward = ForwardedClient & { scope?: ForwardScope };

export function signForward(secret: string, method: string, pathAndQuery: string, client: ForwardedClient, nowMs: number, scope?: ForwardScope): string {
  const fields: unknown[] = [client.address, client.host, client.https];
  if (scope !== undefined) fields.push(scope);
  const payload = Buffer.from(JSON.stringify(fields)).toString('base64url');
  return `${nowMs}.${payload}.${mac(secret, method, pathAndQuery, nowMs, payload)}`;
}

/** The client a valid signature vouches for, or null (absent, malformed, stale or forged). */
export function verifyForward(secret: string, method: string, pathAndQuery: string, header: string | null, nowMs: number): VerifiedForward | null {
  if (header === null) return null;
  const [stamp, payload, signature, extra] = header.split('.');
  if (stamp === undefined || payload === undefined || signature === undefined || extra !== undefined || !/^\d{1,15}$/.test(stamp)) return null;
  const signedAtMs = Number(stamp);
  if (Math.abs(nowMs - signedAtMs) > FORWARD_SIGNATURE_MAX_AGE_MS) return null;
  const expected = Buffer.from(mac(secret, method, pathAndQuery, signedAtMs, payload), 'hex');
  const given = Buffer.from(signature, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  try {
    const [address, host, https, scope] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown[];
    if (typeof address !== 'string' || typeof host !== 'string' || typeof https !== 'boolean') return null;
    if (scope === undefined) return { address, host, https };
    return isScope(scope) ? { address, host, https, scope } : null;
  } catch {
    return null;
  }
}

function mac(secret: string, method: string, pathAndQuery: string, atMs: number, payload: string): string {
  return createHmac('sha256', secret).update(`${method.toUpperCase()}\n${pathAndQuery}\n${atMs}\n${payload}`).digest('hex');
}

function isScope(value: unknown): value is ForwardScope {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { partitions, partitionCount, mergeNowMs, bodySha256 } = value as Record<string, unknown>;
  const count = (x: unknown): boolean => Number.isSafeInteger(x) && (x as number) >= 0;
  if (partitions !== undefined && !(Array.isArray(partitions) && partitions.every(count) && count(partitionCount))) return false;
  if (mergeNowMs !== undefined && !count(mergeNowMs)) return false;
  return bodySha256 === undefined || typeof bodySha256 === 'string';
}
