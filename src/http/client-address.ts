/**
 * Who sent a request and which origin it was addressed to. Forwarded headers count only
 * when the peer is a trusted proxy (TRUSTED_PROXIES); otherwise a client could choose its
 * own address (escaping the login limiter) or its own "own origin" (passing the Origin check).
 */
import { isIP } from 'node:net';
import type { Config } from '../config.ts';
import { normalizeAddress } from './trusted-proxies.ts';
import type { ForwardedClient } from './forward-signature.ts';

/** The part of Bun's server a request handler sees (absent for `app.handle` in tests). */
export interface PeerSource {
  requestIP(request: Request): { address: string } | null;
}

type ProxyConfig = Pick<Config, 'trustedProxies'>;

const UNKNOWN_ADDRESS = 'unknown';

/**
 * Requests another cluster node forwarded with a valid signature (src/http/cluster-front.ts):
 * the client it vouches for replaces the peer, which is only that node. Empty on a single node.
 */
const vouchedClients = new WeakMap<Request, ForwardedClient>();

export function vouchForClient(request: Request, client: ForwardedClient): void {
  vouchedClients.set(request, client);
}

function peerAddress(request: Request, server: PeerSource | null | undefined): string | null {
  const address = server?.requestIP(request)?.address;
  return address === undefined ? null : normalizeAddress(address);
}

function fromTrustedProxy(request: Request, server: PeerSource | null | undefined, config: ProxyConfig): boolean {
  const peer = peerAddress(request, server);
  return peer !== null && config.trustedProxies.includes(peer);
}

/**
 * The client's address: the peer, or behind trusted proxies the nearest address in the
 * forwarded chain that is not itself a trusted proxy (addresses further left were
 * written by whoever sent the request first, and may be invented).
 */
export function clientAddress(request: Request, server: PeerSource | null | undefined, config: ProxyConfig): string {
  const vouched = vouchedClients.get(request);
  if (vouched !== undefined) return vouched.address;
  const peer = peerAddress(request, server);
  if (peer === null) return UNKNOWN_ADDRESS;
  if (!config.trustedProxies.includes(peer)) return peer;
  const chain = forwardedFor(request);
  for (let i = chain.length - 1; i >= 0; i--) {
    const hop = chain[i]!;
    if (!config.trustedProxies.includes(hop)) return hop;
  }
  return chain[0] ?? peer;
}

/** The host and scheme the client addressed; forwarded values only from a trusted proxy. */
export function requestedOrigin(request: Request, server: PeerSource | null | undefined, config: ProxyConfig): { host: string; https: boolean } {
  const vouched = vouchedClients.get(request);
  if (vouched !== undefined) return { host: vouched.host.toLowerCase(), https: vouched.https };
  const url = new URL(request.url);
  const own = { host: request.headers.get('host') ?? url.host, https: url.protocol === 'https:' };
  if (!fromTrustedProxy(request, server, config)) return own;
  const forwarded = lastForwardedElement(request);
  const host = forwarded.host ?? lastListValue(request.headers.get('x-forwarded-host')) ?? own.host;
  const proto = forwarded.proto ?? lastListValue(request.headers.get('x-forwarded-proto'));
  return { host: host.toLowerCase(), https: proto === undefined ? own.https : proto.toLowerCase() === 'https' };
}

/**
 * The service's address as the client reached it (`https://jobs.example.com`), for links sent
 * where no request is (webhooks): the same host and scheme the cross-site guard trusts, so
 * forwarded ones only from a trusted proxy; null when that does not make an http(s) origin.
 */
export function reachedAddress(request: Request, server: PeerSource | null | undefined, config: ProxyConfig): string | null {
  const { host, https } = requestedOrigin(request, server, config);
  try {
    const url = new URL(`${https ? 'https' : 'http'}://${host}`);
    // a host with a path, query or credentials smuggled in is not an address
    return url.username === '' && url.password === '' && url.pathname === '/' && url.search === '' && url.hash === '' ? url.origin : null;
  } catch {
    return null;
  }
}

/** The nearest proxy wrote the last value; earlier ones came from further away (maybe the client). */
function lastListValue(header: string | null): string | undefined {
  if (header === null) return undefined;
  const values = header.split(',').map((value) => value.trim()).filter((value) => value !== '');
  return values.at(-1);
}

/** Addresses of `Forwarded: for=` (RFC 7239) if present, else of `X-Forwarded-For`; unparsable hops are skipped. */
function forwardedFor(request: Request): string[] {
  const forwarded = request.headers.get('forwarded');
  const raw =
    forwarded !== null
      ? forwardedElements(forwarded).map((element) => element.for)
      : (request.headers.get('x-forwarded-for') ?? '').split(',').map((value) => value.trim());
  return raw.map((value) => (value === undefined ? null : addressOfNode(value))).filter((value): value is string => value !== null);
}

function lastForwardedElement(request: Request): { host?: string; proto?: string } {
  const forwarded = request.headers.get('forwarded');
  return forwarded === null ? {} : (forwardedElements(forwarded).at(-1) ?? {});
}

function forwardedElements(header: string): Array<Record<string, string>> {
  return header.split(',').map((element) => {
    const pairs: Record<string, string> = {};
    for (const pair of element.split(';')) {
      const at = pair.indexOf('=');
      if (at <= 0) continue;
      pairs[pair.slice(0, at).trim().toLowerCase()] = pair.slice(at + 1).trim().replace(/^"(.*)"$/, '$1');
    }
    return pairs;
  });
}

/** `1.2.3.4`, `1.2.3.4:5678`, `[2001:db8::1]:80` or `2001:db8::1` -> the address; anything else (`unknown`, `_hidden`) -> null. */
function addressOfNode(node: string): string | null {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(node);
  const candidate = bracketed?.[1] ?? (isIP(node) !== 0 ? node : node.replace(/:\d+$/, ''));
  return isIP(candidate) === 0 ? null : normalizeAddress(candidate);
}
