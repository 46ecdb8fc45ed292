/**
 * TypeBox models of what the service answers, for the OpenAPI document only: the routes
 * return the view types of `actors/` and never validate their own replies. Objects are
 * closed (`additionalProperties: false`), so a field added to a view without a line here
 * fails the route tests' conformance check (test/support/openapi-conformance.ts); the
 * `Exact` checks at the end fail the type check when a view's fields and a model disagree.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { PublicCapabilities, PublicCommand } from '../../actors/services/agent-service.ts';
import type { CommandAccepted as CommandAcceptedView } from '../../actors/services/job-action-service.ts';
import type { CommandView as CommandViewType } from '../../actors/views/command-view.ts';
import type { CleanEstimate as CleanEstimateView } from '../../actors/queries/queue-jobs.ts';
import { CLEANABLE_STATES, COMMAND_TYPES, JOB_COMMAND_TYPES, QUEUE_COMMAND_TYPES, TASK_COMMAND_TYPES, WORKER_COMMAND_TYPES } from '../../actors/connection/command-types.ts';
import type { PublicUser } from '../../actors/services/account-service.ts';
import type { PublicConnection } from '../../actors/services/connection-service.ts';
import type { PublicActionResult } from '../../actors/services/job-action-service.ts';
import type { IngestReply as IngestReplyView } from '../../actors/connection/connection-actor.ts';
import { JOB_STATES, WORKER_STATES } from '../../actors/ingest/states.ts';
import { TIME_RANGES } from '../../actors/metrics/queue-metrics.ts';
import type { JobDetail as JobDetailView, JobListItem as JobListItemView } from '../../actors/views/job-view.ts';
import type { Workflow as WorkflowView } from '../../actors/queries/workflow.ts';
import type { QueueStreamItem as QueueStreamItemView, QueueView } from '../../actors/views/queue-view.ts';
import type { WorkerView } from '../../actors/views/worker-view.ts';
import { EVENT_ERROR_CODES } from '../routes/error-docs.ts';
import { SHARD_STATES } from '../shards/shard-states.ts';
import { literals } from '../routes/list-params.ts';

export const closed = <T extends Parameters<typeof Type.Object>[0]>(properties: T, description?: string) =>
  Type.Object(properties, { additionalProperties: false, ...(description === undefined ? {} : { description }) });
export const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/** `Date#toISOString`: UTC with milliseconds */
export const time = (description?: string) => Type.String({ format: 'date-time', ...(description === undefined ? {} : { description }) });
const count = () => Type.Integer({ minimum: 0 });
const freeObject = (description: string) => Type.Object({}, { additionalProperties: true, description });

export const Usage = closed(
  { used: count(), limit: Type.Integer({ minimum: 0, description: '0 means unlimited' }), remaining: count(), resetAt: time('next midnight UTC') },
  "Today's accepted events of the connection",
);

const COMMAND_STATUS_WORDS =
  '`pending`: the agent has not reported; `done`: carried out; `failed`: the job system did not do it (`reason` says why, "not found" when it no longer has the target); `unsupported`: the job system cannot do it (`reason` says why); `expired`: no outcome came within COMMAND_CONFIRM_SECONDS';
const commandStatus = () => literals(['pending', 'done', 'failed', 'unsupported', 'expired'] as const, { description: COMMAND_STATUS_WORDS });
export const OutcomeDetails = Type.Record(Type.String(), Type.Union([Type.Number(), Type.String(), Type.Boolean(), Type.Null()]), {
  description: 'what the agent reported beside its outcome, e.g. `{"removed": 1204}`',
});

const LastCommand = closed(
  {
    id: Type.String(),
    type: literals(JOB_COMMAND_TYPES),
    status: commandStatus(),
    reason: nullable(Type.String()),
    details: nullable(OutcomeDetails),
    createdAt: time(),
    completedAt: nullable(time()),
  },
  "The job's latest command and what became of it. While a revoke or retry is pending the job shows what the contract answered; one that failed, was unsupported or expired is withdrawn: the job shows what the job system reported",
);

const CleanParams = Type.Union([
  closed({ mode: Type.Literal('finished'), olderThanMs: count(), states: Type.Array(literals(CLEANABLE_STATES)) }),
  closed({ mode: Type.Literal('waiting') }),
]);
const ConcurrencyParams = closed({ concurrency: nullable(Type.Integer({ minimum: 1 })) });
const RateLimitParams = closed({ rate: nullable(Type.String()) });
const PoolParams = closed({ delta: Type.Integer() });

const CommandTarget = Type.Union([
  closed({ kind: Type.Literal('job'), jobId: Type.String() }),
  closed({ kind: Type.Literal('queue'), queue: Type.String() }),
  closed({ kind: Type.Literal('worker'), workerId: Type.String({ description: "the worker's externalId" }), hostname: Type.String(), pid: nullable(Type.Integer()) }),
  closed({ kind: Type.Literal('task'), name: Type.String(), queue: nullable(Type.String()) }),
]);

export const CommandView = closed(
  {
    id: Type.String(),
    connectionId: Type.String(),
    type: literals(COMMAND_TYPES),
    target: CommandTarget,
    params: nullable(Type.Union([CleanParams, ConcurrencyParams, RateLimitParams, PoolParams])),
    status: commandStatus(),
    reason: nullable(Type.String()),
    details: nullable(OutcomeDetails),
    createdAt: time(),
    completedAt: nullable(time()),
  },
  'A command sent to the agent and what became of it',
);

export const CommandAccepted = closed(
  {
    commandId: nullable(Type.String({ description: 'the command; null when the service asked for one retry per failed job instead (see `retriesRequested`)' })),
    retriesRequested: Type.Optional(count()),
  },
  'Accepted: the command waits for the agent; its outcome arrives on the target, the live stream (`command` events) and GET /api/commands/{id}',
);

export const JobListItem = closed({
  id: Type.String(),
  externalId: Type.String(),
  framework: Type.String(),
  connectionId: Type.String(),
  name: Type.String(),
  queue: nullable(Type.String()),
  state: literals(JOB_STATES),
  stateChangedAt: nullable(time()),
  scheduledFor: nullable(time()),
  createdAt: time(),
  startedAt: nullable(time()),
  completedAt: nullable(time()),
  durationMs: nullable(Type.Integer({ minimum: 0, description: "the current run's completedAt minus its startedAt; null while it runs or either is unknown" })),
  workerId: nullable(Type.String()),
  error: nullable(Type.String({ description: "the current run's error: an earlier run's is in the detail's `attempts`" })),
  parentId: nullable(Type.String({ description: "The jobwatch id of the job that started this one (its `parentExternalId`'s job in the same connection); null without one, or while the parent has not arrived" })),
  rootId: nullable(Type.String({ description: 'The jobwatch id of the first job of its workflow (the job itself when it starts one); null outside a workflow, or while the root has not arrived' })),
  lastCommand: nullable(LastCommand),
  progress: nullable(Type.Number({ minimum: 0, maximum: 1, description: "how far the current run is (reported, or read from a progress object's `percent`, `progress` or done-of-`total`); beyond V0" })),
});

const ActionAvailability = closed({ available: Type.Boolean(), reason: nullable(Type.String({ description: 'why not, when not available' })) });

const RecentExecution = closed({
  id: Type.String(),
  externalId: Type.String(),
  state: literals(JOB_STATES),
  createdAt: time(),
  startedAt: nullable(time()),
  completedAt: nullable(time()),
  durationMs: nullable(Type.Integer({ minimum: 0 })),
  error: nullable(Type.String()),
});

export const JobDetail = closed({
  ...JobListItem.properties,
  tags: freeObject('`extensions.tags` when it is an object'),
  previousState: nullable(literals(JOB_STATES)),
  attempt: Type.Integer({ minimum: 1, description: 'the current run, 1 for the first; runs added by hand count too' }),
  maxRetries: nullable(count()),
  manualRetries: Type.Integer({
    minimum: 0,
    description: "runs added by a retry from jobwatch that the agent reported carried out: the job system's retry limit (`maxRetries`) does not count them",
  }),
  progressData: Type.Unknown({ description: 'progress reported as an object, as it came (masked); null when a number or nothing was reported' }),
  args: Type.Unknown({
    description: "what the job was called with, any JSON, as the agent sent it: values under secret-looking keys masked, cut past the service's size (see `truncated`); null when not sent (V0 said always null)",
  }),
  result: Type.Unknown({ description: "the current run's result, any JSON, masked and cut like `args`; null when not sent" }),
  logs: Type.Array(Type.String(), { description: "the job's log lines, oldest first; the newest are kept within JOB_LOG_LINES and JOB_LOG_KB" }),
  attempts: Type.Array(
    closed({
      attempt: Type.Integer({ minimum: 0 }),
      state: literals(JOB_STATES),
      startedAt: nullable(time()),
      finishedAt: nullable(time()),
      workerId: nullable(Type.String()),
      error: nullable(Type.String()),
      stacktrace: nullable(Type.String()),
    }),
    { description: "every run of the job, oldest first, the current one last (its state is the job's); a run that failed and was retried reads `failed`" },
  ),
  truncated: Type.Array(closed({ field: literals(['args', 'result', 'progressData'] as const), bytes: count() }), {
    description: 'payload fields kept cut: the value is then the head of the JSON text (a string), and `bytes` what the whole text was',
  }),
  stacktrace: nullable(Type.String()),
  extensions: freeObject('Framework-specific data, as ingested'),
  stateHistory: Type.Array(
    closed({
      state: literals(JOB_STATES),
      timestamp: time(),
      note: Type.Optional(Type.String({ description: 'on the entries of a revoke or retry: `revoke requested`, `revoke refused: <reason>`, `revoke expired unconfirmed` (and `retry ...`)' })),
    }),
  ),
  recentExecutions: Type.Array(RecentExecution, { maxItems: 10 }),
  actions: closed(
    Object.fromEntries(JOB_COMMAND_TYPES.map((type) => [type, ActionAvailability])) as Record<(typeof JOB_COMMAND_TYPES)[number], typeof ActionAvailability>,
    'Whether each command can work for this job now: the state rule, what its agent reported it supports and what its job system can do (a refused revoke or retry is still answered as the contract says)',
  ),
});

const availabilityOf = <T extends string>(types: readonly T[], description: string) =>
  closed(Object.fromEntries(types.map((type) => [type, ActionAvailability])) as Record<T, typeof ActionAvailability>, description);

const HealthBar = closed({
  timeRange: literals(TIME_RANGES),
  buckets: Type.Array(closed({ start: time(), end: time(), succeeded: count(), failed: count() })),
});

/** The queue of the live stream: no metrics. */
export const QueueStreamItem = closed({
  id: Type.String(),
  name: Type.String(),
  framework: Type.String(),
  connectionId: Type.String(),
  depth: count(),
  consumers: count(),
  extensions: freeObject("Framework-specific data: the newest queue snapshot's `extensions`, `{}` until one carries them"),
  paused: nullable(Type.Boolean({ description: "paused in the job system: the newest snapshot's `extensions.paused`, or a pause or resume the agent carried out; null until either said" })),
  controls: availabilityOf(QUEUE_COMMAND_TYPES, "Whether each control can work for the queue now, and why not (what the agent reported, a pending command, the queue's state)"),
  commands: Type.Array(CommandView, { maxItems: 10, description: "the queue's latest commands, newest first" }),
  createdAt: time(),
});

export const Queue = closed({
  ...QueueStreamItem.properties,
  throughput: nullable(Type.Number({ minimum: 0, description: 'finished jobs per second over `timeRange`' })),
  avgLatencyMs: nullable(Type.Number({ minimum: 0 })),
  failureRate: nullable(Type.Number({ minimum: 0, maximum: 1 })),
  healthBar: nullable(HealthBar),
});

export const Worker = closed({
  id: Type.String(),
  externalId: Type.String(),
  framework: Type.String(),
  connectionId: Type.String(),
  hostname: Type.String(),
  pid: nullable(Type.Integer()),
  state: literals(WORKER_STATES),
  lastHeartbeat: nullable(time()),
  concurrency: nullable(count()),
  activeJobs: count(),
  queues: Type.Array(Type.String()),
  metadata: freeObject('Framework-specific metadata'),
  taskRate: nullable(Type.Number({ minimum: 0, description: 'jobs per minute over the last hour' })),
  processedTotal: nullable(count()),
  extensions: freeObject('Framework-specific data'),
  controls: availabilityOf(WORKER_COMMAND_TYPES, 'Whether each control can work for the worker now, and why not'),
  commands: Type.Array(CommandView, { maxItems: 10, description: "the worker's latest commands, newest first" }),
  createdAt: time(),
});

const PagePagination = closed({ page: Type.Integer({ minimum: 1 }), limit: Type.Integer({ minimum: 1 }), total: count(), totalPages: count() });
const pageOf = <T extends TSchema>(item: T) => closed({ data: Type.Array(item), pagination: PagePagination });

const PayloadScan = closed(
  {
    partial: Type.Boolean({ description: "the search's time budget ran out before the page was full: `nextCursor` goes on from the row it reached" }),
    examined: count(),
    totalExact: Type.Boolean({ description: 'whether `total` counted every match; else it is an upper bound' }),
  },
  'Present only for a search by `args` or `data.<path>`: how its scan went',
);

export const JobPage = closed({
  data: Type.Array(JobListItem),
  pagination: closed({
    nextCursor: nullable(Type.String({ description: 'pass as `cursor` for the next page; null: no more' })),
    limit: Type.Integer({ minimum: 1 }),
    total: count(),
    scan: Type.Optional(PayloadScan),
  }),
});
export const QueuePage = pageOf(Queue);
export const WorkerPage = pageOf(Worker);

export const User = closed({ id: Type.String(), email: Type.String(), isAdmin: Type.Boolean(), createdAt: time() });
export const UserReply = closed({ user: User });

export const Connection = closed({
  id: Type.String(),
  name: Type.String(),
  keyPrefix: Type.String({ description: 'the start of the API key, to recognise it' }),
  createdAt: time(),
  usage: Usage,
  teamId: nullable(Type.String({ description: 'the team that owns it (null only for a connection from before teams, until the first start of this version moves it)' })),
  role: literals(['viewer', 'operator', 'admin'] as const, { description: "the signed-in user's role on it: their role in its team" }),
});
export const ConnectionList = closed({ data: Type.Array(Connection) });
export const CreatedConnection = closed({
  connection: Connection,
  apiKey: Type.String({ pattern: '^sk_', description: 'shown this once; only its hash is stored' }),
});

export const IngestReply = closed({
  accepted: count(),
  rejected: count(),
  skipped: Type.Integer({ minimum: 0, description: 'events already received (same duplicate key)' }),
  truncated: Type.Integer({ minimum: 0, description: 'job events dropped because the daily limit was reached inside the batch' }),
  usage: Usage,
  errors: Type.Optional(
    Type.Array(
      closed({
        index: Type.Integer({ minimum: 0, description: 'position of the event in `events`' }),
        code: literals(EVENT_ERROR_CODES),
        message: Type.String(),
        details: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
      }),
      { maxItems: 100, description: 'the rejected events (the first 100); codes on /docs/errors' },
    ),
  ),
});

const ActionSucceeded = closed({ id: Type.String(), success: Type.Literal(true), state: literals(JOB_STATES) });
const ActionFailed = closed({ id: Type.String(), success: Type.Literal(false), error: Type.String() });
export const ActionResult = ActionSucceeded;
export const BulkActionReply = closed({ results: Type.Array(Type.Union([ActionSucceeded, ActionFailed])) });

export const Command = Type.Union(
  [
    closed({ id: Type.String(), type: literals(JOB_COMMAND_TYPES), jobId: Type.String(), externalId: Type.String(), name: Type.String(), queue: nullable(Type.String()), createdAt: time() }, 'A command on a job'),
    closed({ id: Type.String(), type: literals(QUEUE_COMMAND_TYPES), queue: Type.String(), params: Type.Optional(Type.Union([CleanParams, ConcurrencyParams])), createdAt: time() }, 'A command on a queue'),
    closed(
      { id: Type.String(), type: literals(WORKER_COMMAND_TYPES), workerId: Type.String(), hostname: Type.String(), pid: nullable(Type.Integer()), params: Type.Optional(PoolParams), createdAt: time() },
      'A command on a worker (`workerId`: its externalId)',
    ),
    closed({ id: Type.String(), type: literals(TASK_COMMAND_TYPES), name: Type.String(), queue: nullable(Type.String()), params: Type.Optional(RateLimitParams), createdAt: time() }, 'A command on a task'),
  ],
  { description: 'docs/api.md, "Agent commands": what each type asks and the outcomes it may have' },
);
export const CommandList = closed({ data: Type.Array(Command, { description: 'pending commands, oldest first' }) });
export const AckReply = closed({ acked: Type.Integer({ minimum: 0, description: 'pending commands this request acknowledged' }) });
export const AgentConnection = closed({ connectionId: Type.String() });

const ControlSupport = Type.Union([closed({ supported: Type.Literal(true) }), closed({ supported: Type.Literal(false), reason: Type.String() })]);
export const Capabilities = closed(
  {
    connectionId: Type.String(),
    framework: Type.String(),
    agentVersion: Type.String(),
    reportedAt: time('when the agent first said this (a report that says the same changes nothing)'),
    controls: Type.Record(Type.String(), ControlSupport, { description: 'command type -> whether the agent carries it out, and why not' }),
  },
  'What an agent of one framework said it can do',
);
export const CapabilitiesList = closed({ data: Type.Array(Capabilities) });
export const CleanEstimate = closed(
  {
    jobs: count(),
    atLeast: Type.Boolean({ description: 'the count stopped at its bound: at least `jobs`' }),
    source: literals(['jobwatch', 'snapshot'] as const, { description: "`jobwatch`: counted from the jobs jobwatch keeps (an estimate: the job system may hold fewer, or some it never reported); `snapshot`: the queue's depth as the agent last reported it" }),
  },
  'How many jobs a clean would remove, as far as jobwatch knows',
);

export const Health = closed({
  status: literals(['ok', 'unavailable'] as const),
  timestamp: time(),
  // cluster mode only: 'starting' until the node's replica recovered, then 'node'; its id, and the partitions it writes now (p.<n>, accounts)
  role: Type.Optional(literals(['starting', 'node'] as const)),
  node: Type.Optional(Type.String()),
  writes: Type.Optional(Type.Array(Type.String())),
  // cluster mode only: the partitions whose state the node keeps, applied and current (its own, its standby ones, the accounts; docs/cluster.md)
  keeps: Type.Optional(Type.Array(Type.String())),
  // the node's copy of the log (the partitions it keeps): null until it recovered at start; lag = lastKnownSeq - appliedSeq
  replica: Type.Optional(
    Type.Union([
      closed({
        following: Type.Boolean(),
        appliedSeq: Type.Integer({ minimum: 0 }),
        lastKnownSeq: Type.Integer({ minimum: 0 }),
        lag: Type.Integer({ minimum: 0 }),
      }),
      Type.Null(),
    ]),
  ),
  // with WORKERS above 1: each shard and its state (one that is not ready answers its connections 503)
  shards: Type.Optional(Type.Array(closed({ shard: Type.Integer({ minimum: 0 }), state: literals(SHARD_STATES) }))),
});

const WorkflowNode = closed({
  id: Type.String(),
  externalId: Type.String(),
  name: Type.String(),
  queue: nullable(Type.String()),
  state: literals(JOB_STATES),
  nativeState: nullable(Type.String({ description: "the job system's own state when its agent sends one (BullMQ's `waiting-children`)" })),
  createdAt: time(),
  startedAt: nullable(time()),
  completedAt: nullable(time()),
  stateChangedAt: nullable(time()),
  depth: Type.Integer({ minimum: 0, description: '0 for the top of the tree' }),
  parentId: nullable(Type.String({ description: 'the node above it in the tree; null for the top' })),
  edge: nullable(literals(['parent', 'root'] as const, { description: '`parent`: it names that job as its parent; `root`: it names the workflow\'s root and no parent that is here (a Celery group member)' })),
  missingParentExternalId: nullable(Type.String({ description: 'the parent it names when that job is not here: not arrived yet, or removed by retention' })),
  children: Type.Integer({ minimum: 0 }),
});

export const Workflow = closed({
  jobId: Type.String({ description: 'the job asked for' }),
  rootId: Type.String({ description: "the tree's top: the workflow's root, else the highest of the job's parents that is here" }),
  missingRootExternalId: nullable(Type.String({ description: 'the root the jobs name when that job is not here: not arrived yet, or removed by retention' })),
  nodes: Type.Array(WorkflowNode, { description: 'by level from the top, each level oldest first' }),
  totals: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description: 'jobs per state over the nodes returned' }),
  stuck: Type.Array(
    closed({
      jobId: Type.String(),
      kind: literals(['waiting_on_failed_child', 'not_started'] as const),
      message: Type.String(),
      waitsOn: Type.Array(Type.String(), { description: 'the failed children it waits on' }),
    }),
    { description: 'each node that waits, and on what' },
  ),
  truncated: nullable(closed({ reason: literals(['depth', 'nodes'] as const), message: Type.String() })),
  limits: closed({ depthMax: Type.Integer(), nodesMax: Type.Integer() }),
});

/**
 * Fails the type check when a view type and its model differ in field names or in what a
 * field may hold (both directions). Closed models only bind field names at run time.
 */
type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Loose<T> = T extends string ? string : T extends Array<infer E> ? Loose<E>[] : T extends object ? { [K in keyof T]: Loose<T[K]> } : T;
export const same = <A, B>(verdict: Exact<Loose<A>, Loose<B>>): void => void verdict;
same<JobListItemView, Static<typeof JobListItem>>(true);
same<JobDetailView, Static<typeof JobDetail>>(true);
same<WorkflowView, Static<typeof Workflow>>(true);
same<QueueView, Static<typeof Queue>>(true);
same<QueueStreamItemView, Static<typeof QueueStreamItem>>(true);
same<WorkerView, Static<typeof Worker>>(true);
same<PublicUser, Static<typeof User>>(true);
same<PublicConnection, Static<typeof Connection>>(true);
same<PublicCommand, Static<typeof Command>>(true);
same<IngestReplyView, Static<typeof IngestReply>>(true);
same<CommandViewType, Static<typeof CommandView>>(true);
same<CommandAcceptedView, Static<typeof CommandAccepted>>(true);
same<PublicCapabilities, Static<typeof Capabilities>>(true);
same<CleanEstimateView, Static<typeof CleanEstimate>>(true);
same<PublicActionResult, Static<typeof ActionSucceeded> | Static<typeof ActionFailed>>(true);
