/**
 * The absolute address of a page of this service, for links it hands out (an invitation,
 * a password reset, the single sign-on callback): under PUBLIC_URL when set, else the
 * scheme and host the client reached (forwarded ones only from a trusted proxy).
 */
import type { Config } from '../config.ts';
import { requestedOrigin, type PeerSource } from './client-address.ts';

export function publicAddress(path: string, request: Request, server: PeerSource | null | undefined, config: Pick<Config, 'publicUrl' | 'trustedProxies'>): string {
  if (config.publicUrl !== null) return config.publicUrl + path;
  const { https, host } = requestedOrigin(request, server, config);
  return `${https ? 'https' : 'http'}://${host}${path}`;
}

/** The page that sets a password with a link's token; the token is in the fragment, so no server or proxy log sees it. */
export function passwordLinkAddress(token: string, request: Request, server: PeerSource | null | undefined, config: Pick<Config, 'publicUrl' | 'trustedProxies'>): string {
  return publicAddress(`/set-password#token=${token}`, request, server, config);
}
