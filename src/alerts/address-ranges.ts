/**
 * Which IP addresses a webhook may not reach: the machine itself, private networks, and
 * the cloud metadata service, whose credentials a request from inside the host can read.
 * Each refusal names its range, so a user sees why their URL was refused.
 */
import { isIP } from 'node:net';

export type RefusedRange =
  | 'cloud metadata'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'CGNAT (shared address space)'
  | 'unspecified'
  | 'multicast'
  | 'reserved'
  | 'IPv4-mapped IPv6';

/** Refused even with ALERT_WEBHOOK_ALLOW_PRIVATE=true: no intranet webhook lives there. */
export const ALWAYS_REFUSED: ReadonlySet<RefusedRange> = new Set(['cloud metadata']);

interface V4Range {
  base: number;
  bits: number;
  range: RefusedRange;
}

const v4 = (text: string, bits: number, range: RefusedRange): V4Range => ({ base: ipv4Number(text)!, bits, range });

/** The first match wins: the metadata address before the link-local block that holds it. */
const V4_RANGES: readonly V4Range[] = [
  v4('169.254.169.254', 32, 'cloud metadata'),
  v4('0.0.0.0', 8, 'unspecified'),
  v4('10.0.0.0', 8, 'private'),
  v4('100.64.0.0', 10, 'CGNAT (shared address space)'),
  v4('127.0.0.0', 8, 'loopback'),
  v4('169.254.0.0', 16, 'link-local'),
  v4('172.16.0.0', 12, 'private'),
  v4('192.0.0.0', 24, 'reserved'),
  v4('192.168.0.0', 16, 'private'),
  v4('198.18.0.0', 15, 'reserved'),
  v4('224.0.0.0', 4, 'multicast'),
  v4('240.0.0.0', 4, 'reserved'),
];

/** The range `address` (an IPv4 or IPv6 literal) falls in, or null for a public address; a string that is no address is 'reserved'. */
export function refusedRangeOf(address: string): RefusedRange | null {
  const family = isIP(address);
  if (family === 4) return v4RangeOf(ipv4Number(address)!);
  if (family === 6) return v6RangeOf(ipv6Hextets(address));
  return 'reserved';
}

function v4RangeOf(value: number): RefusedRange | null {
  for (const { base, bits, range } of V4_RANGES) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if (((value & mask) >>> 0) === ((base & mask) >>> 0)) return range;
  }
  return null;
}

function v6RangeOf(h: number[]): RefusedRange | null {
  const [a, b, c, d, e, f, g, last] = h as [number, number, number, number, number, number, number, number];
  const zeroPrefix = a === 0 && b === 0 && c === 0 && d === 0 && e === 0;
  if (a === 0xfd00 && b === 0x0ec2 && c === 0 && d === 0 && e === 0 && f === 0 && g === 0 && last === 0x254) return 'cloud metadata';
  if (zeroPrefix && f === 0 && g === 0 && last === 0) return 'unspecified';
  if (zeroPrefix && f === 0 && g === 0 && last === 1) return 'loopback';
  // ::ffff:a.b.c.d reaches the IPv4 address; refused whatever it is, as a way around the IPv4 checks
  if (zeroPrefix && f === 0xffff) return 'IPv4-mapped IPv6';
  // ::a.b.c.d (the deprecated IPv4-compatible form)
  if (zeroPrefix && f === 0) return 'reserved';
  if ((a & 0xffc0) === 0xfe80) return 'link-local';
  if ((a & 0xfe00) === 0xfc00) return 'private';
  if ((a & 0xff00) === 0xff00) return 'multicast';
  return null;
}

function ipv4Number(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    const octet = Number(part);
    if (!/^\d{1,3}$/.test(part) || octet > 255) return null;
    value = value * 256 + octet;
  }
  return value;
}

/** Eight 16-bit groups of a valid IPv6 literal (a zone index ignored, an IPv4 tail folded in). */
function ipv6Hextets(text: string): number[] {
  let address = text.split('%')[0]!;
  const tail = address.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (tail !== null) {
    const value = ipv4Number(tail[1]!)!;
    address = address.slice(0, -tail[1]!.length) + `${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  }
  const [head, rest] = address.split('::') as [string, string | undefined];
  const headGroups = head === '' ? [] : head.split(':');
  const restGroups = rest === undefined || rest === '' ? [] : rest.split(':');
  const missing = 8 - headGroups.length - restGroups.length;
  const groups = rest === undefined ? headGroups : [...headGroups, ...Array<string>(missing).fill('0'), ...restGroups];
  return groups.map((group) => parseInt(group, 16));
}
