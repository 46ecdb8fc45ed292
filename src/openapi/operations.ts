/**
 * What the OpenAPI document says about each route, keyed `METHOD path` as Elysia
 * registers it. Request models are the ones the routes validate with (exported beside
 * each route); replies are the models of response-models.ts. Kept out of the route files
 * so that a route reads as what it does. A route missing here still appears in the
 * document, bare, and test/openapi/routes-match.test.ts fails on it.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import type { ErrorCode } from '../../actors/domain-error.ts';
import { AckBody, CapabilitiesBody, CommandsParams } from '../routes/agent.ts';
import { CapabilitiesParams, RateLimitBody } from '../routes/commands.ts';
import { CleanBody, CleanEstimateParams, ConcurrencyBody } from '../routes/queue-controls.ts';
import { PoolBody } from '../routes/worker-controls.ts';
import { LoginBody } from '../routes/auth.ts';
import { CreateConnectionBody } from '../routes/connections.ts';
import { BulkBody } from '../routes/job-actions.ts';
import { JobListParams } from '../routes/jobs.ts';
import { QueueListParams, QueueParams } from '../routes/queues.ts';
import { StreamParams } from '../routes/stream.ts';
import { USER_OPERATIONS } from './user-operations.ts';
import { TEAM_OPERATIONS } from './team-operations.ts';
import { VIEW_OPERATIONS } from './view-operations.ts';
import { Me } from './team-models.ts';
import { WorkerListParams } from '../routes/workers.ts';
import type { Auth } from './error-responses.ts';
import { IngestBody } from './ingest-body.ts';
import * as Reply from './response-models.ts';
import { STREAM_DESCRIPTION } from './stream-description.ts';
import { ALERT_OPERATIONS } from './alert-operations.ts';
import { TASK_METRICS_OPERATIONS } from './task-metrics-operations.ts';

/** A success answer: JSON with a model, or another media type described in words. */
export interface SuccessDoc {
  description: string;
  json?: TSchema;
  /** a non-JSON body: media type -> what it holds */
  media?: Record<string, string>;
  /** response headers: name -> description */
  headers?: Record<string, string>;
}

export interface OperationDoc {
  tag: Tag;
  summary: string;
  description?: string;
  auth: Auth;
  /** query parameters; every one is optional (the route fills its defaults) */
  query?: TSchema;
  /** request headers the route reads (beyond authentication) */
  headers?: TSchema;
  /** a JSON body, read by the route with bodyReader */
  body?: TSchema;
  success: Record<number, SuccessDoc>;
  /** the route's own error codes; edge codes are added by errorCodesOf */
  errors: ErrorCode[];
}

export const TAGS = {
  Ingest: 'Events from the job system (API key)',
  Agent: "The job system's agent: control commands and their outcomes (API key)",
  Auth: 'Sessions and users (session cookie)',
  Users: 'Users, invitations, passwords (the instance admin; a password of your own)',
  Teams: 'Teams, their members and roles (session cookie)',
  Connections: 'Connections and their API keys (session cookie)',
  Jobs: 'Job lists, detail, revoke and retry (session cookie)',
  Queues: 'Queues, their metrics and their controls (session cookie)',
  Workers: 'Workers and their controls (session cookie)',
  Commands: 'Commands sent to the agents, their outcomes, and what each agent supports (session cookie)',
  Metrics: 'Task metrics over months, and markers (session cookie; markers also with the API key)',
  Alerts: 'Alert rules, webhook channels and firing alerts (session cookie)',
  Stream: 'Live updates over Server-Sent Events (session cookie)',
  Admin: 'Administration (admin session)',
  Service: 'Health and documentation (no authentication)',
  Operations: 'Prometheus metrics (METRICS_TOKEN)',
} as const;
export type Tag = keyof typeof TAGS;

const partial = (schema: TSchema) => Type.Partial(schema);
const SESSION_SET = {
  'Set-Cookie':
    '`session=<token>; HttpOnly; SameSite=Lax; Path=/` and `device=<signed id>; HttpOnly; SameSite=Strict; Path=/api/auth` (both Secure over HTTPS); ' +
    'the device cookie lets this browser log in while others guess at the account',
};
export const RETRY_AFTER = { 'Retry-After': 'seconds until a retry can succeed' };

const ACCEPTED_WORDS = 'Answered 202 with the command; its outcome (done, failed with the reason, unsupported, expired) arrives on the target, the live stream and GET /api/commands/{id}.';

function jobCommandDoc(summary: string, description: string): OperationDoc {
  return {
    tag: 'Jobs',
    summary,
    description: `${description} The job's state stays what the job system reports. ${ACCEPTED_WORDS} Other states: 409 \`INVALID_STATE\`.`,
    auth: 'session',
    success: { 202: { description: 'Accepted', json: Reply.CommandAccepted } },
    errors: ['NOT_FOUND', 'INVALID_STATE', 'SERVICE_UNAVAILABLE'],
  };
}

function queueCommandDoc(summary: string, description = '', body?: TSchema): OperationDoc {
  return {
    tag: 'Queues',
    summary,
    description: `${description} ${ACCEPTED_WORDS} At most 1,000 commands on queues, workers and tasks wait per connection (429 \`RATE_LIMITED\` beyond).`.trim(),
    auth: 'session',
    ...(body === undefined ? {} : { body }),
    success: { 202: { description: 'Accepted', json: Reply.CommandAccepted } },
    errors: body === undefined ? ['NOT_FOUND', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'] : ['VALIDATION_ERROR', 'NOT_FOUND', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
  };
}

function workerCommandDoc(summary: string, description = '', body?: TSchema): OperationDoc {
  return { ...queueCommandDoc(summary, description, body), tag: 'Workers' };
}

export const OPERATIONS: Record<string, OperationDoc> = {
  'POST /api/ingest': {
    tag: 'Ingest',
    summary: 'Send a batch of job, worker and queue events',
    description:
      'Accepted events are durable (in the append log, per the fsync policy) before the answer. Each event is validated on its own: ' +
      'a bad event is counted in `rejected` and listed in `errors`, the rest go on. A duplicate event is `skipped`; events past the daily ' +
      'limit inside the batch are `truncated`. Body at most 5 MiB (5,242,880 bytes), 1 to 1,000 events, nested at most 32 levels, ' +
      'at most 16,384 members per object and 65,536 elements per array, 1 MiB per event. A used-up quota is answered before the body is read; ' +
      'past the requests or body bytes one connection may have in flight the answer is 429 `RATE_LIMITED` with `Retry-After`.',
    auth: 'apiKey',
    body: IngestBody,
    success: { 200: { description: 'What became of each event', json: Reply.IngestReply } },
    errors: ['VALIDATION_ERROR', 'DAILY_LIMIT_EXCEEDED', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
  },
  'GET /api/agent/connection': {
    tag: 'Agent',
    summary: "The API key's connection",
    description: 'An agent given only the key learns which `connectionId` its events must name.',
    auth: 'apiKey',
    success: { 200: { description: 'The connection of the key', json: Reply.AgentConnection } },
    errors: [],
  },
  'GET /api/agent/commands': {
    tag: 'Agent',
    summary: 'Pending commands for the job system',
    description:
      'Every command made in the dashboard or the API (revoke, retry, run now, delete, kill; pause, resume, clean, retry all failed and concurrency of a queue; ' +
      'quiet, stop and pool of a worker; a task\'s rate limit) is queued for the connection until the agent acknowledges it, or until no outcome came ' +
      'within COMMAND_CONFIRM_SECONDS (then it is expired and no longer handed out). What each type asks: docs/api.md, "Agent commands".',
    auth: 'apiKey',
    query: partial(CommandsParams.schema),
    success: { 200: { description: 'Pending commands, oldest first', json: Reply.CommandList } },
    errors: [],
  },
  'POST /api/agent/commands/ack': {
    tag: 'Agent',
    summary: 'Acknowledge commands the agent carried out (or failed to)',
    description:
      '`ids` were carried out; `outcomes` say per command `done`, `failed` (with the reason; "not found" when the job system no longer has the target) ' +
      'or `unsupported` (the job system cannot do it, with the reason), and may carry `details` (at most 16 keys: numbers, short texts, booleans). ' +
      'Together 1 to 1,000 commands; body at most 128 KiB. Unknown or already acknowledged ids are ignored, so an ack can be retried.',
    auth: 'apiKey',
    body: AckBody.schema,
    success: { 200: { description: 'How many pending commands this acknowledged', json: Reply.AckReply } },
    errors: ['RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
  },
  'PUT /api/agent/capabilities': {
    tag: 'Agent',
    summary: 'Say what this agent can do',
    description:
      'An agent sends it at its start and again after an outage: for each command type, `{supported: true}` or `{supported: false, reason}`. ' +
      'The latest report per connection and framework is kept (durably); the dashboard disables what the job system cannot do, with the reason. ' +
      'Types this service does not know are ignored; a type a report leaves out counts as one the agent does not know.',
    auth: 'apiKey',
    body: CapabilitiesBody.schema,
    success: { 200: { description: 'The report as kept', json: Reply.Capabilities } },
    errors: ['VALIDATION_ERROR', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
  },
  'POST /api/auth/login': {
    tag: 'Auth',
    summary: 'Log in: sets the session cookie',
    description:
      'Failed logins are slowed per client address and per email: past the limit, 429 `RATE_LIMITED` with `Retry-After`. ' +
      'A browser presenting the device cookie of an earlier successful login of this email has a count of its own instead ' +
      '(10 failures per 15 minutes), so guessers elsewhere cannot make its owner wait.',
    auth: 'none',
    body: LoginBody.schema,
    success: { 200: { description: 'Logged in', json: Reply.UserReply, headers: SESSION_SET } },
    errors: ['UNAUTHORIZED', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
  },
  'POST /api/auth/logout': {
    tag: 'Auth',
    summary: 'Log out: ends the session and clears the cookie',
    auth: 'none',
    success: { 204: { description: 'Logged out (also without a session)' } },
    errors: ['SERVICE_UNAVAILABLE'],
  },
  'GET /api/auth/me': {
    tag: 'Auth',
    summary: 'The logged-in user and their connections',
    auth: 'session',
    success: { 200: { description: 'The user', json: Me } },
    errors: [],
  },
  'POST /api/connections': {
    tag: 'Connections',
    summary: 'Create a connection and its API key (an admin of the team)',
    description:
      'The key is in this answer only; the service keeps its hash. `teamId` names the team to own it; without it, the creator\'s first team ' +
      'where they are an admin (403 when there is none). 409 `CONFLICT` for a name the team already has; at most 100 connections per team.',
    auth: 'session',
    body: CreateConnectionBody.schema,
    success: { 201: { description: 'Created; `apiKey` is shown this once', json: Reply.CreatedConnection } },
    errors: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
  },
  'GET /api/connections': {
    tag: 'Connections',
    summary: "The connections of the user's teams, with today's usage and the user's role on each",
    auth: 'session',
    success: { 200: { description: 'Oldest first', json: Reply.ConnectionList } },
    errors: [],
  },
  'DELETE /api/connections/:id': {
    tag: 'Connections',
    summary: 'Delete a connection, its key and all its data (an admin of its team)',
    auth: 'session',
    success: { 204: { description: 'Deleted' } },
    errors: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  },
  'GET /api/jobs': {
    tag: 'Jobs',
    summary: 'List jobs (cursor pages)',
    description:
      "Jobs of every connection of the user's teams; `connectionId` narrows it (another team's id gives an empty page). `search` matches the task name, " +
      'case-insensitive. Ties sort by id; nulls last in both orders. A `cursor` is opaque and bound to its `sortBy` and `sortOrder`. ' +
      'Search by what jobs were called with: `args` finds a piece of the arguments\' JSON text (case-sensitive, quotes included: `args={"userId":42`), ' +
      'and `data.<path>=<value>` a field of the arguments equal to a value (`data.userId=42`, `data.items.0.sku=A-1`; `kwargs.<path>` is short for `data.kwargs.<path>`, ' +
      'Celery\'s keyword arguments), at most 4 such fields; combined with every other filter and sort. Such a search has a time budget: past it, the page ends ' +
      'at the row it reached, `pagination.scan.partial` is true and `nextCursor` goes on from there; `pagination.scan.totalExact` says whether `total` counted every match.',
    auth: 'session',
    query: partial(JobListParams.schema),
    success: { 200: { description: 'A page of jobs', json: Reply.JobPage } },
    errors: [],
  },
  'GET /api/jobs/:id': {
    tag: 'Jobs',
    summary: 'One job in full, with its state history',
    auth: 'session',
    success: { 200: { description: 'The job', json: Reply.JobDetail } },
    errors: ['NOT_FOUND'],
  },
  'GET /api/jobs/:id/workflow': {
    tag: 'Jobs',
    summary: "The workflow a job belongs to: its tree, totals per state, and why it is stuck",
    description:
      'The tree from the workflow\'s root down (a Celery canvas, a BullMQ flow), each node with its state, times and the edge to its parent; ' +
      'at most 32 levels and 10,000 jobs (`truncated` says where it was cut). `stuck` names each node that waits and on what. ' +
      'A job outside any workflow is a tree of one. See docs/api.md#workflows.',
    auth: 'session',
    success: { 200: { description: 'The workflow', json: Reply.Workflow } },
    errors: ['NOT_FOUND'],
  },
  'POST /api/jobs/:id/revoke': {
    tag: 'Jobs',
    summary: 'Revoke (cancel) a queued or active job',
    description: 'Moves the job to `cancelled`, broadcasts it and queues a command for the agent. Other states: 409 `INVALID_STATE`.',
    auth: 'session',
    success: { 200: { description: 'Revoked', json: Reply.ActionResult } },
    errors: ['NOT_FOUND', 'INVALID_STATE', 'SERVICE_UNAVAILABLE'],
  },
  'POST /api/jobs/:id/retry': {
    tag: 'Jobs',
    summary: 'Retry a failed or cancelled job, or run a job waiting to retry now',
    description:
      'Moves the job to `retrying`, broadcasts it and queues a command for the agent. A job already `retrying` (waiting for its next attempt) is asked to run now and keeps its state. Other states: 409 `INVALID_STATE`.',
    auth: 'session',
    success: { 200: { description: 'Retried', json: Reply.ActionResult } },
    errors: ['NOT_FOUND', 'INVALID_STATE', 'SERVICE_UNAVAILABLE'],
  },
  'POST /api/jobs/:id/promote': jobCommandDoc('Run a scheduled job now', 'Asks the job system to run a `scheduled` job now (BullMQ `promote`, Sidekiq: add to the queue now).'),
  'POST /api/jobs/:id/delete': jobCommandDoc('Delete a job from the job system', "Asks the job system to delete a job in any state but `active` (jobwatch keeps its history)."),
  'POST /api/jobs/:id/kill': jobCommandDoc('Kill a job waiting to retry', 'Asks the job system to fail a `retrying` job for good (BullMQ: move to failed; Sidekiq: to the dead set).'),
  'POST /api/jobs/bulk/revoke': {
    tag: 'Jobs',
    summary: 'Revoke up to 100 jobs',
    description: 'Each job on its own: a job in another state or not found is a result with `success: false` and `error`, not an error answer.',
    auth: 'session',
    body: BulkBody.schema,
    success: { 200: { description: 'A result per id', json: Reply.BulkActionReply } },
    errors: ['VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'],
  },
  'POST /api/jobs/bulk/retry': {
    tag: 'Jobs',
    summary: 'Retry up to 100 jobs',
    description: 'Each job on its own, as bulk revoke.',
    auth: 'session',
    body: BulkBody.schema,
    success: { 200: { description: 'A result per id', json: Reply.BulkActionReply } },
    errors: ['VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'],
  },
  ...ALERT_OPERATIONS,
  ...TEAM_OPERATIONS,
  ...VIEW_OPERATIONS,
  ...USER_OPERATIONS,
  ...TASK_METRICS_OPERATIONS,
  'GET /api/queues': {
    tag: 'Queues',
    summary: 'List queues with metrics over a time range (page-based)',
    auth: 'session',
    query: partial(QueueListParams.schema),
    success: { 200: { description: 'A page of queues', json: Reply.QueuePage } },
    errors: [],
  },
  'GET /api/queues/:id': {
    tag: 'Queues',
    summary: 'One queue with its metrics over a time range, its controls and its latest commands',
    auth: 'session',
    query: partial(QueueParams.schema),
    success: { 200: { description: 'The queue', json: Reply.Queue } },
    errors: ['NOT_FOUND'],
  },
  'POST /api/queues/:id/pause': queueCommandDoc('Pause the queue in the job system', 'Its workers take no new jobs until it is resumed; the running ones finish.'),
  'POST /api/queues/:id/resume': queueCommandDoc('Resume a paused queue'),
  'POST /api/queues/:id/clean': queueCommandDoc(
    'Remove finished jobs older than a time, or every waiting job',
    '`{mode: "finished", olderThanMs, states: ["completed","failed"]}` or `{mode: "waiting"}`. The outcome\'s `details.removed` says how many the job system removed.',
    CleanBody.schema,
  ),
  'POST /api/queues/:id/retry-failed': queueCommandDoc(
    'Retry every failed job of the queue',
    'Where the agent retries jobs one by one (Celery), the service asks for one retry per failed job of the queue it knows (at most 1,000 a request): `commandId` is null and `retriesRequested` says how many.',
  ),
  'POST /api/queues/:id/concurrency': queueCommandDoc('Limit how many jobs of the queue run at once', '`{concurrency: n}` (1 to 1,000,000) or `{concurrency: null}` to clear it (BullMQ: global concurrency).', ConcurrencyBody.schema),
  'GET /api/queues/:id/clean-estimate': {
    tag: 'Queues',
    summary: 'How many jobs a clean would remove, as far as jobwatch knows',
    description: 'For the confirm step. `states` is comma-separated. An estimate: the job system may hold fewer (cleaned already) or jobs it never reported.',
    auth: 'session',
    query: partial(CleanEstimateParams.schema),
    success: { 200: { description: 'The estimate', json: Reply.CleanEstimate } },
    errors: ['NOT_FOUND'],
  },
  'POST /api/workers/:id/quiet': workerCommandDoc('Quiet a worker: it takes no new jobs and finishes those it runs'),
  'POST /api/workers/:id/stop': workerCommandDoc('Stop a worker (its process shuts down as its job system does on a signal)'),
  'POST /api/workers/:id/pool': workerCommandDoc('Grow or shrink a worker\'s pool', '`{delta}`: processes to add (positive) or take away (negative), at most 1,000 either way.', PoolBody.schema),
  'POST /api/tasks/rate-limit': {
    tag: 'Commands',
    summary: "Set or clear a task's rate limit in the job system",
    description: "`{connectionId, name, rate}`: Celery's syntax (`10/m`), or null to clear it. Answered 202; the agent reports the outcome.",
    auth: 'session',
    body: RateLimitBody.schema,
    success: { 202: { description: 'Accepted', json: Reply.CommandAccepted } },
    errors: ['VALIDATION_ERROR', 'NOT_FOUND', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
  },
  'GET /api/commands/:id': {
    tag: 'Commands',
    summary: 'A command and what became of it',
    auth: 'session',
    success: { 200: { description: 'The command', json: Reply.CommandView } },
    errors: ['NOT_FOUND'],
  },
  'GET /api/capabilities': {
    tag: 'Commands',
    summary: "What the connections' agents said they can do",
    auth: 'session',
    query: partial(CapabilitiesParams.schema),
    success: { 200: { description: 'One entry per connection and framework that reported', json: Reply.CapabilitiesList } },
    errors: [],
  },
  'GET /api/workers': {
    tag: 'Workers',
    summary: 'List workers (page-based)',
    description: 'A worker not heard from for more than 6 s is `offline`, whatever it last reported.',
    auth: 'session',
    query: partial(WorkerListParams.schema),
    success: { 200: { description: 'A page of workers', json: Reply.WorkerPage } },
    errors: [],
  },
  'GET /api/events/stream': {
    tag: 'Stream',
    summary: 'Live updates (Server-Sent Events)',
    description: STREAM_DESCRIPTION,
    auth: 'session',
    query: StreamParams.schema,
    headers: Type.Object({ 'last-event-id': Type.Optional(Type.String({ maxLength: 64, description: 'resume after this event id' })) }),
    success: {
      200: {
        description: 'An endless event stream; see the operation description for its events',
        media: { 'text/event-stream': 'Events `job`, `worker`, `queue`, `command` and `reset`, each `data:` one line of JSON (schemas StreamJob, StreamWorker, StreamQueue, StreamCommand)' },
      },
    },
    errors: ['RATE_LIMITED'],
  },
  'POST /api/admin/backup': {
    tag: 'Admin',
    summary: 'Take and download a consistent backup of the running service (admin only)',
    description:
      '`npm run cli -- backup <dir>` calls this; restore with `npm run cli -- restore`. See docs/operations.md, "Backup and restore". ' +
      'A POST with no body: each call writes a full snapshot, so it is a write, behind the same cross-site checks as every other ' +
      '(a foreign page cannot start one by navigating to it).',
    auth: 'session',
    success: {
      200: {
        description: 'The backup file',
        media: { 'application/octet-stream': 'a snapshot file of the data directory' },
        headers: { 'Content-Disposition': '`attachment; filename="<name>"`', 'X-Backup-Seq': 'the log sequence number the backup holds' },
      },
    },
    errors: ['FORBIDDEN', 'SERVICE_UNAVAILABLE'],
  },
  'GET /api/health': {
    tag: 'Service',
    summary: 'Health',
    description:
      '503 with `status: "unavailable"` once the event log could not be written and the service is stopping. In cluster mode ' +
      'it also names `role` (`owner`; `standby`: answers reads from its replica of the log and forwards writes to `owner`; ' +
      '`taking over`: 503 while it catches up after winning the lease), `node`, `owner`, and on a standby `replica` ' +
      '(null until it caught up at start; `following` false and 503 once it stopped following the log).',
    auth: 'none',
    success: {
      200: { description: 'Healthy', json: Reply.Health },
      503: { description: 'The event log failed; the service is stopping', json: Reply.Health },
    },
    errors: [],
  },
  'GET /docs/errors': {
    tag: 'Service',
    summary: 'The error codes page every `docs_url` points at',
    auth: 'none',
    success: { 200: { description: 'One anchor per code', media: { 'text/html': 'the page' } } },
    errors: [],
  },
  'GET /docs': {
    tag: 'Service',
    summary: 'This API reference, as a page',
    auth: 'none',
    success: { 200: { description: 'The reference page (its script is served by the service)', media: { 'text/html': 'the page' } } },
    errors: [],
  },
  'GET /metrics': {
    tag: 'Operations',
    summary: 'Prometheus metrics in the text exposition format',
    description: 'Off (404) unless METRICS_TOKEN is set; then the token is required. The families are listed in docs/operations.md, "Health, metrics, logs and upgrades".',
    auth: 'metricsToken',
    success: { 200: { description: 'The scrape', media: { 'text/plain; version=0.0.4; charset=utf-8': 'Prometheus text exposition format' } } },
    errors: ['NOT_FOUND'],
  },
  'GET /openapi.json': {
    tag: 'Service',
    summary: 'This document (OpenAPI 3.1)',
    auth: 'none',
    success: { 200: { description: 'The document', media: { 'application/json': 'an OpenAPI 3.1 document' } } },
    errors: [],
  },
};
