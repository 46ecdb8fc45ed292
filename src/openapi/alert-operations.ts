/** What the OpenAPI document says about the alert routes (docs/alerts.md is the guide). */
import { AlertListParams, CreateChannelBody, CreateRuleBody, PreviewRuleBody, UpdateRuleBody } from '../routes/alerts.ts';
import * as Reply from './alert-models.ts';
import type { OperationDoc } from './operations.ts';
import { Type } from '@sinclair/typebox';

const KINDS_TEXT =
  '`failure_rate` (failed / finished over the window above `threshold`, a fraction, over at least 5 finished jobs; `queue` optional), ' +
  '`queue_depth` (a queue\'s depth above `threshold` for the whole window; `queue` optional, else the deepest), ' +
  '`worker_offline` (no worker, or none consuming `queue`, online for the window), ' +
  '`task_missing` (no job named `task` completed within the window), ' +
  '`job_stuck` (a job, of `task`/`queue` if given, active longer than the window), ' +
  '`runtime_percentile` (the p95 run time of `task`, in `queue` if given, over the window above `threshold` ms, or with `relativeTo: "week_before"` above `threshold` times the same window 7 days earlier; over at least 5 runs in each window; from task metrics, so it holds past job retention), ' +
  '`workflow_stuck` (a workflow, of root task `task` if given, whose root has not finished the window after it started; or at once, a parent that has not started waiting on a failed child; see docs/api.md#workflows).';

export const ALERT_OPERATIONS: Record<string, OperationDoc> = {
  'GET /api/alert-channels': {
    tag: 'Alerts',
    summary: "Webhook channels of the user's connections, each with its last deliveries",
    auth: 'session',
    query: Type.Partial(AlertListParams.schema),
    success: { 200: { description: 'The channels', json: Reply.AlertChannelList } },
    errors: [],
  },
  'POST /api/alert-channels': {
    tag: 'Alerts',
    summary: 'Create a webhook channel',
    description:
      '`format` `json` sends the documented payload, `slack` a Slack-compatible `{"text": ...}`. Every request is signed: ' +
      '`X-Jobwatch-Signature: sha256=<hex HMAC-SHA256 of the body>` keyed by `secret`, shown in this answer only. ' +
      'The URL must be http(s) and must not resolve to a loopback, private, link-local, CGNAT or metadata address ' +
      '(unless the service runs with ALERT_WEBHOOK_ALLOW_PRIVATE=true); a refusal is a 400 naming `url` and the reason. ' +
      'At most 20 channels per connection (409 `CONFLICT`).',
    auth: 'session',
    body: CreateChannelBody.schema,
    success: { 201: { description: 'Created; `secret` is shown this once', json: Reply.CreatedAlertChannel } },
    errors: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
  },
  'DELETE /api/alert-channels/:id': {
    tag: 'Alerts',
    summary: 'Delete a channel, its waiting deliveries and history; rules stop naming it',
    auth: 'session',
    success: { 204: { description: 'Deleted' } },
    errors: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  },
  'POST /api/alert-channels/:id/test': {
    tag: 'Alerts',
    summary: 'Send a test notification now',
    description:
      'Queues a delivery with `status: "test"` and sends it in the connection\'s turn: like every delivery it takes one of the connection\'s 4 send slots, so it waits behind the connection\'s own sends in flight (never another connection\'s). ' +
      '`attempt` is what the first attempt came to (it is retried like any delivery); `waiting` is true when no slot freed within 5 s. ' +
      'At most 5 tests per connection at once, then one every 12 s: past that, 429 `RATE_LIMITED` with `Retry-After`.',
    auth: 'session',
    success: { 200: { description: 'The first attempt', json: Reply.TestDeliveryReply } },
    errors: ['NOT_FOUND', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
  },
  'GET /api/alert-rules': {
    tag: 'Alerts',
    summary: "Alert rules of the user's connections, with their state and the value now",
    auth: 'session',
    query: Type.Partial(AlertListParams.schema),
    success: { 200: { description: 'The rules', json: Reply.AlertRuleList } },
    errors: [],
  },
  'POST /api/alert-rules': {
    tag: 'Alerts',
    summary: 'Create an alert rule',
    description: `Kinds: ${KINDS_TEXT} Each transition (firing, resolved) notifies every channel in \`channelIds\` once. At most 100 rules per connection (409 \`CONFLICT\`).`,
    auth: 'session',
    body: CreateRuleBody.schema,
    success: { 201: { description: 'Created', json: Reply.AlertRule } },
    errors: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
  },
  'POST /api/alert-rules/preview': {
    tag: 'Alerts',
    summary: "A rule's value now, before it is saved",
    auth: 'session',
    body: PreviewRuleBody.schema,
    success: { 200: { description: 'The value now and whether the condition holds', json: Reply.AlertMeasure } },
    errors: ['VALIDATION_ERROR', 'NOT_FOUND'],
  },
  'PATCH /api/alert-rules/:id': {
    tag: 'Alerts',
    summary: 'Edit a rule',
    description: 'The fields given replace the rule\'s (`null` clears `queue`, `task` or `threshold`); the result must still fit its kind. A firing rule stays firing until the next evaluation says otherwise.',
    auth: 'session',
    body: UpdateRuleBody.schema,
    success: { 200: { description: 'The rule as saved', json: Reply.AlertRule } },
    errors: ['VALIDATION_ERROR', 'NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  },
  'DELETE /api/alert-rules/:id': {
    tag: 'Alerts',
    summary: 'Delete a rule and its state',
    auth: 'session',
    success: { 204: { description: 'Deleted' } },
    errors: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  },
  'GET /api/alerts': {
    tag: 'Alerts',
    summary: 'Alerts firing now and recent transitions',
    auth: 'session',
    query: Type.Partial(AlertListParams.schema),
    success: { 200: { description: 'Firing and recent', json: Reply.AlertsOverviewReply } },
    errors: [],
  },
};
