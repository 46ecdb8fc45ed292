/** GET /docs/errors: the page every `docs_url` points at, one anchor per code. */
import { Elysia } from 'elysia';
import type { ErrorCode } from '../../actors/domain-error.ts';
import { STATUS_OF } from '../http/error-envelope.ts';

const EXPLANATIONS: Record<ErrorCode, string> = {
  VALIDATION_ERROR: 'The request or a parameter failed validation. `details` maps each failing field to its messages. Fix the named fields and send again.',
  UNAUTHORIZED: 'Ingest needs `Authorization: Bearer sk_...` with a valid API key; dashboard endpoints need a session cookie from POST /api/auth/login.',
  FORBIDDEN: 'The user may not do this (e.g. only an admin creates users), or a mutating request came from a foreign Origin.',
  NOT_FOUND: 'The resource does not exist, or belongs to another user.',
  CONFLICT: 'The resource already exists (e.g. a connection with that name, or a user with that email).',
  INVALID_STATE: 'The job is in a state that does not allow the action; the message names the state.',
  REQUEST_TIMEOUT: 'The request body did not arrive within BODY_TIMEOUT_SECONDS (30 s by default). Send the whole body promptly; the connection is closed.',
  PAYLOAD_TOO_LARGE: 'The request body exceeds the limit of the endpoint: 5 MB (5,242,880 bytes) for ingest, 16 to 128 KB for the dashboard and agent endpoints. Send smaller batches.',
  UNSUPPORTED_MEDIA_TYPE: 'Send `Content-Type: application/json`.',
  DAILY_LIMIT_EXCEEDED: 'The daily event limit of the connection is used up. `usage.resetAt` and `Retry-After` (seconds) say when it resets; data already ingested is kept.',
  RATE_LIMITED: 'Too many attempts (e.g. failed logins). Wait `Retry-After` seconds.',
  SERVICE_UNAVAILABLE: 'The service cannot make data durable (the event log could not be written) and is stopping. Nothing in this request was acknowledged; retry against the restarted service.',
  INTERNAL_ERROR: 'An unexpected error. It was logged on the server; the response carries no internals.',
};

const escapeHtml = (text: string): string => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Error codes</title>
<style>body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;line-height:1.5}code{background:#f3f3f3;padding:0 .25rem}</style></head>
<body><h1>Error codes</h1><p>Every error response is <code>{"error":{"code","message","docs_url","details?"}}</code>.</p>
${(Object.keys(EXPLANATIONS) as ErrorCode[])
  .map((code) => `<section id="${code}"><h2><code>${code}</code> (HTTP ${STATUS_OF[code]})</h2><p>${escapeHtml(EXPLANATIONS[code])}</p></section>`)
  .join('\n')}
</body></html>`;

export function errorDocsRoutes() {
  return new Elysia({ name: 'error-docs' }).get(
    '/docs/errors',
    () => new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8' } }),
  );
}
