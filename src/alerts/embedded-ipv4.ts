/**
 * The IPv6 forms that carry an IPv4 address, and the address each carries: a packet to
 * one of them reaches (or is translated or tunnelled to) that IPv4 address, so the
 * webhook guard judges it as that address (address-ranges.ts).
 *
 * | Form | Prefix | Where the IPv4 address is |
 * |---|---|---|
 * | IPv4-mapped | `::ffff:0:0/96` | the last 32 bits |
 * | IPv4-translated (SIIT) | `::ffff:0:0:0/96` | the last 32 bits |
 * | IPv4-compatible (deprecated) | `::/96` but `::` and `::1` | the last 32 bits |
 * | NAT64 well-known | `64:ff9b::/96` | the last 32 bits |
 * | NAT64 local-use | `64:ff9b:1::/48` | the last 32 bits for a /96 translator prefix; RFC 6052's other offsets (/48, /56, /64) are candidates too |
 * | 6to4 | `2002::/16` | bits 16-47 |
 * | Teredo | `2001::/32` | the client's address: the last 32 bits, inverted |
 * | ISATAP | any prefix, interface id `0:5efe` or `200:5efe` | the last 32 bits |
 */
export type EmbeddingForm =
  | 'IPv4-mapped'
  | 'IPv4-translated'
  | 'IPv4-compatible'
  | 'NAT64'
  | 'NAT64 local-use'
  | '6to4'
  | 'Teredo'
  | 'ISATAP';

export interface EmbeddedIpv4 {
  form: EmbeddingForm;
  /** the IPv4 address as a 32-bit unsigned number */
  value: number;
  /** the IPv4 address as dotted text */
  text: string;
  /** other addresses the form may carry (a local-use NAT64 prefix of another length) */
  otherCandidates: readonly number[];
}

/** The IPv4 address an IPv6 address (as eight 16-bit groups) carries, or null. */
export function embeddedIpv4(h: readonly number[]): EmbeddedIpv4 | null {
  const [a, b, c, d, e, f, g, last] = h as [number, number, number, number, number, number, number, number];
  const low32 = ((g << 16) | last) >>> 0;
  const first64Zero = a === 0 && b === 0 && c === 0 && d === 0;
  if (first64Zero && e === 0 && f === 0xffff) return carried('IPv4-mapped', low32);
  if (first64Zero && e === 0xffff && f === 0) return carried('IPv4-translated', low32);
  // `::` and `::1` are IPv6's own unspecified and loopback addresses
  if (first64Zero && e === 0 && f === 0 && (g !== 0 || last > 1)) return carried('IPv4-compatible', low32);
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) return carried('NAT64', low32);
  if (a === 0x64 && b === 0xff9b && c === 0x0001) return carried('NAT64 local-use', low32, localUseCandidates(h));
  if (a === 0x2002) return carried('6to4', ((b << 16) | c) >>> 0);
  if (a === 0x2001 && b === 0) return carried('Teredo', ~low32 >>> 0);
  if ((e & 0xfcff) === 0 && f === 0x5efe) return carried('ISATAP', low32);
  return null;
}

/** RFC 6052: with a /48 prefix the address is in bits 48-63 and 72-87, /56 in 56-63 and 72-95, /64 in 72-103 (bits 64-71 are zero). */
function localUseCandidates(h: readonly number[]): number[] {
  const bytes = h.flatMap((group) => [group >> 8, group & 0xff]);
  const number = (...indexes: number[]): number => indexes.reduce((value, index) => value * 256 + bytes[index]!, 0);
  return [number(6, 7, 9, 10), number(7, 9, 10, 11), number(9, 10, 11, 12)];
}

function carried(form: EmbeddingForm, value: number, otherCandidates: readonly number[] = []): EmbeddedIpv4 {
  return { form, value, text: ipv4Text(value), otherCandidates };
}

export function ipv4Text(value: number): string {
  return [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff].join('.');
}

export function ipv4Number(text: string): number | null {
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
export function ipv6Hextets(text: string): number[] {
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
