/**
 * One webhook request: the guard's check at send time, then a POST to the checked
 * address (the hostname still names the TLS certificate and the Host header), no
 * redirects followed, a 5 s deadline for the whole exchange, and at most a small part of
 * the answer read. Never throws: every way it can end is a SendResult.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { SendResult } from '../../actors/alerts/alert-book.ts';
import { checkWebhookTarget, WebhookRefusal, type CheckedTarget, type GuardOptions } from './webhook-guard.ts';

export interface SenderOptions extends GuardOptions {
  timeoutMs: number;
  /** how much of an answer is read (and quoted in the history for a failure) */
  responseBytesMax: number;
}

export const SENDER_DEFAULTS = { timeoutMs: 5_000, responseBytesMax: 4_096 } as const;

/** How much of a failed answer the delivery history quotes. */
const QUOTED_CHARS_MAX = 200;

export async function sendWebhook(rawUrl: string, body: string, headers: Record<string, string>, options: SenderOptions): Promise<SendResult> {
  let target: CheckedTarget;
  try {
    target = await checkWebhookTarget(rawUrl, options);
  } catch (error) {
    if (error instanceof WebhookRefusal) return { ok: false, httpStatus: null, error: `refused: ${error.message}`, retryable: error.retryable };
    throw error;
  }
  return post(target, body, headers, options);
}

function post(target: CheckedTarget, body: string, headers: Record<string, string>, options: SenderOptions): Promise<SendResult> {
  const { promise, resolve } = Promise.withResolvers<SendResult>();
  // Connect to the address the guard checked, whatever a new lookup of the name would say.
  const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all === true) (callback as (error: null, addresses: Array<{ address: string; family: number }>) => void)(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const client = target.url.protocol === 'https:' ? https : http;
  let settled = false;
  const finish = (result: SendResult): void => {
    if (settled) return;
    settled = true;
    clearTimeout(deadline);
    resolve(result);
  };
  const request = client.request(
    target.url,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'jobwatch-alerts', ...headers },
      lookup: pinned,
    },
    (response) => {
      const status = response.statusCode ?? 0;
      let received = '';
      let receivedBytes = 0;
      response.on('data', (chunk: Buffer) => {
        receivedBytes += chunk.length;
        if (received.length < QUOTED_CHARS_MAX) received += chunk.toString('utf8');
        // enough read: the rest of a large answer is never buffered
        if (receivedBytes >= options.responseBytesMax) {
          response.destroy();
          finish(outcomeOf(status, received, response.headers.location));
        }
      });
      response.on('end', () => finish(outcomeOf(status, received, response.headers.location)));
      response.on('error', () => finish(outcomeOf(status, received, response.headers.location)));
    },
  );
  const deadline = setTimeout(() => {
    request.destroy();
    finish({ ok: false, httpStatus: null, error: `no answer within ${options.timeoutMs / 1000} s`, retryable: true });
  }, options.timeoutMs);
  request.on('error', (error: Error & { code?: string }) => finish({ ok: false, httpStatus: null, error: `request failed: ${error.code ?? error.message}`, retryable: true }));
  request.end(body);
  return promise;
}

/** 2xx delivered; a redirect is not followed (and not retried); 408, 429 and 5xx retried; other 4xx not. */
function outcomeOf(status: number, received: string, location: string | undefined): SendResult {
  if (status >= 200 && status < 300) return { ok: true, httpStatus: status, error: null, retryable: false };
  if (status >= 300 && status < 400) return { ok: false, httpStatus: status, error: `redirect${location === undefined ? '' : ` to ${location}`} not followed`, retryable: false };
  const quoted = received.slice(0, QUOTED_CHARS_MAX).trim();
  const error = `HTTP ${status}${quoted === '' ? '' : `: ${quoted}`}`;
  return { ok: false, httpStatus: status, error, retryable: status >= 500 || status === 408 || status === 429 };
}
