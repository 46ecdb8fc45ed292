/**
 * TRUSTED_PROXIES: the reverse proxies whose forwarded headers (`X-Forwarded-For`,
 * `X-Forwarded-Host`, `X-Forwarded-Proto`, `Forwarded`) are believed. Any other peer
 * could write those headers itself, so from it they are ignored.
 */
import { BlockList, isIP } from 'node:net';

export class TrustedProxies {
  private readonly list = new BlockList();

  private constructor(readonly entries: readonly string[]) {
    for (const entry of entries) {
      const [address, bits] = entry.split('/') as [string, string | undefined];
      const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (bits === undefined) this.list.addAddress(address, family);
      else this.list.addSubnet(address, Number(bits), family);
    }
  }

  static readonly none = new TrustedProxies([]);

  /** Comma-separated addresses or CIDRs; throws a message naming the bad entry. */
  static parse(raw: string): TrustedProxies {
    const entries = raw.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
    for (const entry of entries) {
      const problem = entryProblem(entry);
      if (problem !== null) throw new Error(`'${entry}' ${problem}`);
    }
    return new TrustedProxies(entries);
  }

  includes(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && this.list.check(address, family === 6 ? 'ipv6' : 'ipv4');
  }
}

function entryProblem(entry: string): string | null {
  const [address, bits, extra] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || extra !== undefined) return 'is not an IP address or CIDR';
  if (bits === undefined) return null;
  const max = family === 6 ? 128 : 32;
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return `has a prefix length outside 0-${max}`;
  return null;
}

/** `::ffff:10.0.0.1` (an IPv4 peer on a dual-stack socket) is `10.0.0.1`. */
export function normalizeAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return (mapped?.[1] ?? address).toLowerCase();
}
