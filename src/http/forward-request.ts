/**
 * A request this node does not serve, passed to the node that does and its answer passed
 * back unchanged: status, headers and body stream through in both directions (nothing is
 * buffered here, so an ingest body or a live stream costs a pipe, not a copy), and a
 * client that goes away aborts the upstream request, so the owner sees the disconnect.
 * The owner applies its own body caps and deadlines; this side only bounds the wait for
 * the owner's answer to begin, and turns an owner that is gone into a 503 to retry.
 */
import { DomainError } from '../../actors/domain-error.ts';
import type { Config } from '../config.ts';
import { clientAddress, requestedOrigin, type PeerSource } from './client-address.ts';
import { FORWARD_HEADER, signForward, type ForwardScope } from './forward-signature.ts';

/** Connection-level headers belong to one hop (RFC 9110 7.6.1); the rest pass as received, Host and Origin included. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade', 'transfer-encoding'];

/** Past the owner's own body deadline, so a slow upload gets the owner's 408 rather than ours. */
const ANSWER_MARGIN_MS = 1_000;

export interface ForwardTarget {
  node: string;
  url: string;
}

export interface ForwardOptions {
  secret: string;
  config: Pick<Config, 'trustedProxies' | 'bodyTimeoutMs'>;
  /** Sent instead of the request's body (a part of a bulk action split by owner); the request's body is left unread. */
  body?: string;
  /** Signed with the client: what the receiving node is asked beyond answering (a read's partitions, src/http/cluster-reads.ts). */
  scope?: ForwardScope;
}

export async function forwardRequest(
  request: Request,
  server: PeerSource,
  target: ForwardTarget,
  { secret, config, body, scope }: ForwardOptions,
): Promise<Response> {
  const url = new URL(request.url);
  const pathAndQuery = url.pathname + url.search;
  const peer = server.requestIP(request)?.address ?? 'unknown';
  const origin = requestedOrigin(request, server, config);
  const client = { address: clientAddress(request, server, config), host: origin.host, https: origin.https };
  const headers = new Headers(request.headers);
  for (const name of HOP_BY_HOP) headers.delete(name);
  headers.set('x-forwarded-for', [request.headers.get('x-forwarded-for'), peer].filter((value) => value !== null).join(', '));
  // the Host header is the client's text: no quote or backslash may end the quoted string early
  const element = `for=${forwardedNode(peer)};host="${origin.host.replace(/["\\]/g, '')}";proto=${origin.https ? 'https' : 'http'}`;
  headers.set('forwarded', [request.headers.get('forwarded'), element].filter((value) => value !== null).join(', '));
  headers.set(FORWARD_HEADER, signForward(secret, request.method, pathAndQuery, client, Date.now(), scope));
  if (body !== undefined) {
    headers.delete('content-length');
    headers.delete('content-encoding');
  }

  const answerDeadline = new AbortController();
  const timer = setTimeout(
    () => answerDeadline.abort(new Error(`no answer within ${config.bodyTimeoutMs + ANSWER_MARGIN_MS} ms`)),
    config.bodyTimeoutMs + ANSWER_MARGIN_MS,
  );
  const hasBody = request.method !== 'GET' && request.method !== 'HEAD' && request.body !== null;
  try {
    const answer = await fetch(target.url + pathAndQuery, {
      method: request.method,
      headers,
      body: body ?? (hasBody ? request.body : undefined),
      duplex: 'half',
      redirect: 'manual',
      // the body passes through as the owner encoded it, with its own content-encoding header
      decompress: false,
      signal: AbortSignal.any([request.signal, answerDeadline.signal]),
    } as RequestInit);
    return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
  } catch (error) {
    const reason = answerDeadline.signal.aborted ? String(answerDeadline.signal.reason?.message) : describe(error);
    throw new DomainError('SERVICE_UNAVAILABLE', `the node serving this request (${target.node}) is not reachable (${reason}); retry shortly`);
  } finally {
    clearTimeout(timer);
  }
}

/** RFC 7239 node syntax: an IPv6 address is bracketed and quoted. */
function forwardedNode(address: string): string {
  return address.includes(':') ? `"[${address}]"` : address;
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > 200 ? `${message.slice(0, 200)}...` : message;
}
