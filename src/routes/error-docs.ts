/** GET /docs/errors: the page every `docs_url` points at, one anchor per code. */
import { Elysia } from 'elysia';
import type { ErrorCode } from '../../actors/domain-error.ts';
import type { EventErrorCode } from '../../actors/ingest/validate-event.ts';
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
  DAILY_LIMIT_EXCEEDED: 'The daily event limit of the connection is used up (only job events count; a request of worker and queue events alone is still accepted). `usage.resetAt` and `Retry-After` (seconds) say when it resets; data already ingested is kept.',
  RATE_LIMITED: 'Too many attempts (e.g. failed logins). Wait `Retry-After` seconds.',
  SERVICE_UNAVAILABLE: 'The service cannot make data durable (the event log could not be written) and is stopping. Nothing in this request was acknowledged; retry against the restarted service.',
  INTERNAL_ERROR: 'An unexpected error. It was logged on the server; the response carries no internals.',
};

/** Codes of `errors[]` in an ingest reply: one event refused, the rest of the batch goes on. */
const EVENT_EXPLANATIONS: Record<Exclude<EventErrorCode, 'VALIDATION_ERROR'>, string> = {
  CONNECTION_MISMATCH: "The event's `connectionId` is not the connection of the API key.",
  UNSUPPORTED_EVENT_TYPE: 'The event `type` is not one of job_state_change, worker_state_change, queue_snapshot.',
  QUEUE_LIMIT_EXCEEDED: 'The event would create a queue, and the connection already has QUEUES_PER_CONNECTION_MAX queues. Queues nothing has named within the retention window are removed, which frees names; or use fewer queue names.',
  WORKER_LIMIT_EXCEEDED: 'The event would create a worker, and the connection already has WORKERS_PER_CONNECTION_MAX workers. Workers silent for longer than the retention window are removed.',
  STORAGE_LIMIT_EXCEEDED: "The connection's retained jobs are at their memory budget (CONNECTION_MEMORY_MB, an estimate from the jobs' strings). Nothing stored is evicted for it; room is freed as jobs pass retention.",
  DAILY_BYTES_EXCEEDED: "The connection's accepted events today would pass DAILY_INGEST_MB (an estimate from the events' strings). It resets at midnight UTC; the message says when.",
};

/** Every code an ingest reply's `errors[]` can carry (the OpenAPI document lists them). */
export const EVENT_ERROR_CODES = ['VALIDATION_ERROR', ...Object.keys(EVENT_EXPLANATIONS)] as EventErrorCode[];

const section = (code: string, heading: string, text: string): string => `<section id="${code}"><h2><code>${code}</code> ${heading}</h2><p>${escapeHtml(text)}</p></section>`;

const escapeHtml = (text: string): string => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Error codes</title>
<style>body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;line-height:1.5}code{background:#f3f3f3;padding:0 .25rem}</style></head>
<body><h1>Error codes</h1><p>Every error response is <code>{"error":{"code","message","docs_url","details?"}}</code>.</p>
${(Object.keys(EXPLANATIONS) as ErrorCode[]).map((code) => section(code, `(HTTP ${STATUS_OF[code]})`, EXPLANATIONS[code])).join('\n')}
<h1>Per-event codes</h1><p>In <code>errors[]</code> of a POST /api/ingest reply (status 200): that event was refused and counted in <code>rejected</code>, the others were processed. <code>VALIDATION_ERROR</code> there means the event failed the rules above.</p>
${Object.entries(EVENT_EXPLANATIONS).map(([code, text]) => section(code, '(per event)', text)).join('\n')}
</body></html>`;

export function errorDocsRoutes() {
  return new Elysia({ name: 'error-docs' }).get(
    '/docs/errors',
    () => new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8' } }),
  );
}
