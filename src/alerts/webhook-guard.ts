/**
 * The outbound door of webhooks: only http(s), and only to addresses outside the ranges
 * of address-ranges.ts unless ALERT_WEBHOOK_ALLOW_PRIVATE=true. Checked when a channel is
 * created and again before every send (DNS can change); the sender then connects to the
 * very address checked here, so a second lookup cannot swap it (DNS rebinding).
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ALWAYS_REFUSED, classifyAddress, type AddressVerdict } from './address-ranges.ts';

export class WebhookRefusal extends Error {
  constructor(
    message: string,
    /** true when a later attempt may succeed (a lookup that failed), false for a refusal */
    readonly retryable = false,
  ) {
    super(message);
  }
}

export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

export interface GuardOptions {
  allowPrivate: boolean;
  resolve: Resolver;
}

export interface CheckedTarget {
  url: URL;
  /** the address to connect to: the one checked */
  address: string;
  family: 4 | 6;
}

const ALLOWED_PROTOCOLS = new Set(['http:', 'https:']);

export async function checkWebhookTarget(rawUrl: string, options: GuardOptions): Promise<CheckedTarget> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new WebhookRefusal('not a valid absolute URL');
  }
  if (!ALLOWED_PROTOCOLS.has(url.protocol)) throw new WebhookRefusal(`only http and https URLs are allowed, not ${url.protocol.slice(0, -1)}`);
  if (url.username !== '' || url.password !== '') throw new WebhookRefusal('a URL with a user name or password is refused: requests are signed with the channel secret instead');
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(hostname) !== 0) addresses = [{ address: hostname, family: isIP(hostname) }];
  else {
    try {
      addresses = await options.resolve(hostname);
    } catch (error) {
      const code = (error as { code?: string }).code ?? String(error);
      throw new WebhookRefusal(`could not resolve ${hostname} (${code})`, true);
    }
    if (addresses.length === 0) throw new WebhookRefusal(`${hostname} resolves to no address`, true);
  }
  // every address must pass: a name resolving to one public and one private address is refused
  for (const { address } of addresses) {
    const verdict = classifyAddress(address);
    if (verdict.range === null) continue;
    const subject = `${describe(hostname, address)}${embedding(verdict)}`;
    if (ALWAYS_REFUSED.has(verdict.range)) throw new WebhookRefusal(`${subject} is a cloud metadata endpoint (${verdict.endpoint}): always refused`);
    if (!options.allowPrivate) {
      throw new WebhookRefusal(`${subject} is a ${verdict.range} address: refused (ALERT_WEBHOOK_ALLOW_PRIVATE=true allows private addresses for an intranet)`);
    }
  }
  const [first] = addresses;
  return { url, address: first!.address, family: first!.family === 6 ? 6 : 4 };
}

function describe(hostname: string, address: string): string {
  return hostname === address ? address : `${hostname} resolves to ${address}, which`;
}

/** ", which carries 169.254.169.254 (IPv4-mapped), and that": the IPv4 address judged in an IPv6 one's place. */
function embedding(verdict: AddressVerdict): string {
  return verdict.embedded === null ? '' : ` carries ${verdict.embedded.text} (${verdict.embedded.form}), which`;
}
