/**
 * Which IP addresses a webhook may not reach: the machine itself, private networks, and
 * the clouds' metadata and credential endpoints, whose secrets a request from inside the
 * host can read. Each refusal names its range, so a user sees why their URL was refused.
 *
 * An IPv6 address that carries an IPv4 address (mapped, translated, compatible, NAT64,
 * 6to4, Teredo, ISATAP: embedded-ipv4.ts) is judged as that IPv4 address: otherwise
 * `[::ffff:169.254.169.254]` or `[64:ff9b::7f00:1]` would walk around every IPv4 rule.
 */
import { isIP } from 'node:net';
import { embeddedIpv4, ipv4Number, ipv4Text, ipv6Hextets, type EmbeddedIpv4 } from './embedded-ipv4.ts';

export type RefusedRange =
  | 'cloud metadata'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'site-local (deprecated)'
  | 'NAT64 local-use'
  | 'CGNAT (shared address space)'
  | 'unspecified'
  | 'multicast'
  | 'reserved';

/** Refused even with ALERT_WEBHOOK_ALLOW_PRIVATE=true: no intranet webhook lives there. */
export const ALWAYS_REFUSED: ReadonlySet<RefusedRange> = new Set(['cloud metadata']);

/**
 * The metadata and credential endpoints of the big clouds (docs/security.md lists them
 * with their sources). Most sit in ranges refused by default anyway; listing them makes
 * them refused with private addresses allowed too.
 */
export const METADATA_ENDPOINTS: ReadonlyArray<{ address: string; whose: string }> = [
  { address: '169.254.169.254', whose: 'instance metadata (AWS, GCP, Azure, Oracle, IBM, DigitalOcean, Hetzner, Linode, OpenStack, ...)' },
  { address: '169.254.170.2', whose: 'AWS ECS task credentials' },
  { address: '169.254.170.23', whose: 'AWS EKS Pod Identity credentials' },
  { address: '169.254.0.23', whose: 'Tencent Cloud metadata' },
  { address: '169.254.42.42', whose: 'Scaleway metadata' },
  { address: '100.100.100.200', whose: 'Alibaba Cloud metadata' },
  { address: '168.63.129.16', whose: 'Azure WireServer (the host agent)' },
  { address: '192.0.0.192', whose: 'Oracle Cloud metadata (older address)' },
  { address: 'fd00:ec2::254', whose: 'AWS instance metadata over IPv6' },
  { address: 'fd00:ec2::23', whose: 'AWS EKS Pod Identity credentials over IPv6' },
  { address: 'fd20:ce::254', whose: 'GCP metadata over IPv6' },
  { address: 'fd00:a9fe:a9fe::1', whose: 'Linode (Akamai) metadata over IPv6' },
  { address: 'fd00:42::42', whose: 'Scaleway metadata over IPv6' },
];

/** What an address is, for the guard's decision and its message. */
export interface AddressVerdict {
  /** null: a public address */
  range: RefusedRange | null;
  /** for a metadata endpoint: whose it is */
  endpoint: string | null;
  /** the IPv4 address an IPv6 form carries, which was judged in its place */
  embedded: EmbeddedIpv4 | null;
}

interface V4Range {
  base: number;
  bits: number;
  range: RefusedRange;
}

const v4 = (text: string, bits: number, range: RefusedRange): V4Range => ({ base: ipv4Number(text)!, bits, range });

/** In address order; at most one matches (the metadata endpoints are looked up before). */
const V4_RANGES: readonly V4Range[] = [
  v4('0.0.0.0', 8, 'unspecified'),
  v4('10.0.0.0', 8, 'private'),
  v4('100.64.0.0', 10, 'CGNAT (shared address space)'),
  v4('127.0.0.0', 8, 'loopback'),
  v4('169.254.0.0', 16, 'link-local'),
  v4('172.16.0.0', 12, 'private'),
  v4('192.0.0.0', 24, 'reserved'), // IETF protocol assignments
  v4('192.0.2.0', 24, 'reserved'), // documentation
  v4('192.88.99.0', 24, 'reserved'), // the retired 6to4 relay anycast
  v4('192.168.0.0', 16, 'private'),
  v4('198.18.0.0', 15, 'reserved'), // benchmarking
  v4('198.51.100.0', 24, 'reserved'), // documentation
  v4('203.0.113.0', 24, 'reserved'), // documentation
  v4('224.0.0.0', 4, 'multicast'),
  v4('240.0.0.0', 4, 'reserved'), // and the broadcast address
];

const METADATA_BY_ADDRESS = new Map(METADATA_ENDPOINTS.map(({ address, whose }) => [canonical(address), whose]));

/** The range `address` (an IPv4 or IPv6 literal) falls in, or null for a public address; a string that is no address is 'reserved'. */
export function refusedRangeOf(address: string): RefusedRange | null {
  return classifyAddress(address).range;
}

export function classifyAddress(address: string): AddressVerdict {
  const family = isIP(address);
  if (family === 4) return v4Verdict(ipv4Number(address)!, null);
  if (family !== 6) return { range: 'reserved', endpoint: null, embedded: null };
  const hextets = ipv6Hextets(address);
  const endpoint = METADATA_BY_ADDRESS.get(hextets.join(':'));
  if (endpoint !== undefined) return { range: 'cloud metadata', endpoint, embedded: null };
  const embedded = embeddedIpv4(hextets);
  const verdict = embedded === null ? null : v4Verdict(embedded.value, embedded);
  if (verdict?.range === 'cloud metadata') return verdict;
  // a link-local, private or multicast prefix decides first: fe80::5efe:8.8.8.8 is still link-local
  const own = v6RangeOf(hextets);
  if (own !== null || verdict === null) return { range: own, endpoint: null, embedded: null };
  // a local-use NAT64 prefix reaches whatever its operator's translator does: the intranet's business
  if (verdict.range === null && embedded!.form === 'NAT64 local-use') return { ...verdict, range: 'NAT64 local-use' };
  return verdict;
}

function v4Verdict(value: number, embedded: EmbeddedIpv4 | null): AddressVerdict {
  const endpoint = METADATA_BY_ADDRESS.get(ipv4Text(value));
  if (endpoint !== undefined) return { range: 'cloud metadata', endpoint, embedded };
  // A local-use NAT64 prefix may place the IPv4 address at any of RFC 6052's offsets: a metadata endpoint at any of them is refused.
  for (const candidate of embedded?.otherCandidates ?? []) {
    const candidateEndpoint = METADATA_BY_ADDRESS.get(ipv4Text(candidate));
    if (candidateEndpoint !== undefined) return { range: 'cloud metadata', endpoint: candidateEndpoint, embedded: { ...embedded!, value: candidate, text: ipv4Text(candidate) } };
  }
  for (const { base, bits, range } of V4_RANGES) {
    const mask = (0xffffffff << (32 - bits)) >>> 0;
    if (((value & mask) >>> 0) === base) return { range, endpoint: null, embedded };
  }
  return { range: null, endpoint: null, embedded };
}

function v6RangeOf(h: readonly number[]): RefusedRange | null {
  const [a, b, c, d, e, f, g, last] = h as [number, number, number, number, number, number, number, number];
  const zeroPrefix = a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && f === 0 && g === 0;
  if (zeroPrefix && last === 0) return 'unspecified';
  if (zeroPrefix && last === 1) return 'loopback';
  if ((a & 0xffc0) === 0xfe80) return 'link-local';
  if ((a & 0xffc0) === 0xfec0) return 'site-local (deprecated)';
  if ((a & 0xfe00) === 0xfc00) return 'private';
  if ((a & 0xff00) === 0xff00) return 'multicast';
  if (a === 0x0100 && b === 0 && c === 0 && d === 0) return 'reserved'; // 100::/64, discard only
  if (a === 0x2001 && b === 0x0db8) return 'reserved'; // documentation
  return null;
}

/** An IPv6 literal as eight hex groups joined by colons (the metadata table's key); an IPv4 literal as it is. */
function canonical(address: string): string {
  return isIP(address) === 6 ? ipv6Hextets(address).join(':') : address;
}
