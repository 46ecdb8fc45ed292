/**
 * Realistic, unique Celery-like ingest events.
 *
 * Mostly `job_state_change` progressions (queued -> active -> completed / failed /
 * retrying, some jobs still queued or active), task names from a small set with one rare
 * task that is exactly 1% of jobs, a few queues and 16 workers, timestamps in order with
 * jitter, and on failures an error plus a Python traceback of realistic size (1.5-3 KB).
 * A few `worker_state_change` heartbeats and `queue_snapshot` events ride along.
 *
 * Two ways to get bodies:
 * - JobGenerator.nextBody(): a fresh body for the next jobs of a data set (used to load
 *   N jobs before the read scenarios; every job is new, every event unique).
 * - buildTemplates() + stamp(): bodies built before a timed run. Every externalId in a
 *   template starts with an 8-character placeholder that stamp() overwrites with the
 *   request's sequence number, so each request body is different (dedup never skips an
 *   event) while the timed loop does no JSON work: only a few hundred byte writes into a
 *   pre-built buffer. Optionally the first job of a template is a probe whose externalId
 *   also carries the send time in microseconds (for the live-stream delay).
 */
import { randomBytes } from 'node:crypto';

export const RARE_TASK = 'billing.tasks.reconcile_ledger';
/** substring that only the rare task's name contains: `search=` filter matching 1% of jobs */
export const RARE_TASK_SEARCH = 'reconcile_ledger';
/** state + queue combination matching about 1% of jobs (5% failed x 20% in `media`) */
export const RARE_COMBINATION = { state: 'failed', queue: 'media' } as const;

interface TaskKind {
  name: string;
  queue: string;
  weight: number;
  /** execution time range in ms */
  runMs: [number, number];
}

const TASKS: readonly TaskKind[] = [
  { name: 'notifications.tasks.send_email', queue: 'emails', weight: 28, runMs: [40, 900] },
  { name: 'notifications.tasks.send_push', queue: 'emails', weight: 8, runMs: [20, 300] },
  { name: 'media.tasks.resize_image', queue: 'media', weight: 14, runMs: [150, 4_000] },
  { name: 'media.tasks.transcode_video', queue: 'media', weight: 6, runMs: [5_000, 120_000] },
  { name: 'crm.tasks.sync_contact', queue: 'default', weight: 16, runMs: [80, 2_500] },
  { name: 'search.tasks.index_document', queue: 'default', weight: 12, runMs: [30, 1_200] },
  { name: 'reports.tasks.generate_report', queue: 'reports', weight: 6, runMs: [2_000, 90_000] },
  { name: 'billing.tasks.charge_subscription', queue: 'billing', weight: 10, runMs: [300, 5_000] },
];
const RARE_KIND: TaskKind = { name: RARE_TASK, queue: 'billing', weight: 0, runMs: [1_000, 20_000] };
const TASK_WEIGHT_TOTAL = TASKS.reduce((sum, task) => sum + task.weight, 0);

export const QUEUES = ['emails', 'media', 'default', 'reports', 'billing'] as const;
export const WORKER_COUNT = 16;
export const workerId = (n: number): string => `celery@worker-${String(n + 1).padStart(2, '0')}`;

const ERRORS: ReadonlyArray<{ error: string; frames: string[] }> = [
  {
    error:
      "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.mailprovider.example', port=443): Max retries exceeded with url: /v3/messages (Caused by NewConnectionError('<urllib3.connection.HTTPSConnection object at 0x7f3a2c1d9e50>: Failed to establish a new connection: [Errno 111] Connection refused'))",
    frames: ['notifications/tasks.py', 'notifications/clients/mail.py', 'requests/api.py', 'requests/sessions.py', 'requests/adapters.py'],
  },
  {
    error: "psycopg2.errors.SerializationFailure: could not serialize access due to concurrent update\nCONTEXT: while updating tuple (1842,7) in relation \"billing_invoice\"",
    frames: ['billing/tasks.py', 'billing/services/ledger.py', 'django/db/models/query.py', 'django/db/backends/utils.py'],
  },
  {
    error: 'PIL.UnidentifiedImageError: cannot identify image file <_io.BytesIO object at 0x7f1b9a3c4f40>',
    frames: ['media/tasks.py', 'media/processing/images.py', 'PIL/Image.py'],
  },
  {
    error: 'celery.exceptions.SoftTimeLimitExceeded: SoftTimeLimitExceeded()',
    frames: ['reports/tasks.py', 'reports/builders/pdf.py', 'reportlab/platypus/doctemplate.py', 'reportlab/platypus/flowables.py'],
  },
  {
    error: "KeyError: 'external_contact_id'",
    frames: ['crm/tasks.py', 'crm/sync/contacts.py', 'crm/sync/mapping.py'],
  },
];

/** A Python traceback of realistic size (about 1.5-3 KB). */
function traceback(rng: Rng, kind: { error: string; frames: string[] }): string {
  const lines = ['Traceback (most recent call last):'];
  const celeryFrames = [
    ['celery/app/trace.py', 451, 'trace_task', 'R = retval = fun(*args, **kwargs)'],
    ['celery/app/trace.py', 734, '__protected_call__', 'return self.run(*args, **kwargs)'],
  ] as const;
  for (const [file, line, fn, code] of celeryFrames) {
    lines.push(`  File "/usr/local/lib/python3.12/site-packages/${file}", line ${line}, in ${fn}`, `    ${code}`);
  }
  for (const file of kind.frames) {
    const repeats = 1 + Math.floor(rng.next() * 2);
    for (let r = 0; r < repeats; r++) {
      const line = 20 + Math.floor(rng.next() * 900);
      const fn = ['run', 'handle', '_send', 'execute', 'process', 'request', 'send', 'urlopen', '_make_request'][Math.floor(rng.next() * 9)]!;
      const root = file.includes('/') && !/^(requests|django|PIL|reportlab|celery)\//.test(file) ? '/srv/app/' : '/usr/local/lib/python3.12/site-packages/';
      lines.push(
        `  File "${root}${file}", line ${line}, in ${fn}`,
        `    ${['response = self.session.request(method, url, timeout=self.timeout, **kwargs)', 'result = handler(payload, context=ctx, retries=self.max_retries)', 'return super().execute(sql, params)', 'self._commit_batch(rows, on_conflict="update")', 'image = Image.open(BytesIO(blob)).convert("RGB")', 'raise ConnectionError(e, request=request)'][Math.floor(rng.next() * 6)]}`,
      );
    }
  }
  lines.push(kind.error);
  return lines.join('\n');
}

/** mulberry32: fast, seeded, good enough for test data. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  hex(chars: number): string {
    let out = '';
    while (out.length < chars) out += Math.floor(this.next() * 0x100000000).toString(16).padStart(8, '0');
    return out.slice(0, chars);
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();

type FinalState = 'queued' | 'active' | 'completed' | 'failed' | 'retrying';

interface JobPlan {
  externalId: string;
  kind: TaskKind;
  workerId: string;
  final: FinalState;
  createdMs: number;
  startedMs: number;
  endMs: number;
  errorKind: number;
  maxRetries: number;
  extensions: Record<string, unknown> | null;
}

function pickFinal(rng: Rng): FinalState {
  const r = rng.next();
  if (r < 0.03) return 'queued';
  if (r < 0.07) return 'active';
  if (r < 0.08) return 'retrying';
  if (r < 0.13) return 'failed';
  return 'completed';
}

function planJob(rng: Rng, externalId: string, createdMs: number, rare: boolean): JobPlan {
  let kind = RARE_KIND;
  if (!rare) {
    let pick = rng.next() * TASK_WEIGHT_TOTAL;
    kind = TASKS[TASKS.length - 1]!;
    for (const task of TASKS) {
      if ((pick -= task.weight) < 0) {
        kind = task;
        break;
      }
    }
  }
  const startedMs = createdMs + rng.int(3, 1_500);
  const [lo, hi] = kind.runMs;
  // skewed towards short runs, as real task durations are
  const endMs = startedMs + Math.round(lo + (hi - lo) * rng.next() ** 3);
  const final = pickFinal(rng);
  const hasExtensions = rng.next() < 0.1;
  return {
    externalId,
    kind,
    workerId: workerId(rng.int(0, WORKER_COUNT - 1)),
    final,
    createdMs,
    startedMs,
    endMs,
    errorKind: rng.int(0, ERRORS.length - 1),
    maxRetries: kind.queue === 'billing' ? 5 : 3,
    extensions: hasExtensions ? { routing_key: kind.queue, priority: rng.int(0, 9), delivery_info: { exchange: '', redelivered: false } } : null,
  };
}

type Event = Record<string, unknown>;

/** The events of one job's life so far, oldest first. */
function jobEvents(plan: JobPlan, connectionId: string, rng: Rng, stacktraces: Map<number, string>): Event[] {
  const base = { name: plan.kind.name, queue: plan.kind.queue, externalId: plan.externalId };
  const envelope = (atMs: number, job: Event): Event => ({ type: 'job_state_change', timestamp: iso(atMs), framework: 'celery', connectionId, job });
  const events: Event[] = [];
  const queued: Event = { ...base, state: 'queued', attempt: 1, maxRetries: plan.maxRetries, createdAt: iso(plan.createdMs) };
  if (plan.extensions !== null) queued.extensions = plan.extensions;
  events.push(envelope(plan.createdMs, queued));
  if (plan.final === 'queued') return events;
  events.push(
    envelope(plan.startedMs, { ...base, state: 'active', previousState: 'queued', workerId: plan.workerId, attempt: 1, startedAt: iso(plan.startedMs) }),
  );
  if (plan.final === 'active') return events;
  const finished: Event = {
    ...base,
    state: plan.final,
    previousState: 'active',
    workerId: plan.workerId,
    attempt: 1,
    createdAt: iso(plan.createdMs),
    startedAt: iso(plan.startedMs),
  };
  if (plan.final === 'completed' || plan.final === 'failed') finished.completedAt = iso(plan.endMs);
  if (plan.final === 'failed' || plan.final === 'retrying') {
    const kind = ERRORS[plan.errorKind]!;
    finished.error = kind.error;
    let trace = stacktraces.get(plan.errorKind);
    if (trace === undefined || rng.next() < 0.3) {
      trace = traceback(rng, kind);
      stacktraces.set(plan.errorKind, trace);
    }
    finished.stacktrace = trace;
  }
  events.push(envelope(plan.endMs, finished));
  return events;
}

function heartbeat(connectionId: string, atMs: number, rng: Rng): Event {
  const n = rng.int(0, WORKER_COUNT - 1);
  return {
    type: 'worker_state_change',
    timestamp: iso(atMs),
    framework: 'celery',
    connectionId,
    worker: {
      externalId: workerId(n),
      hostname: `worker-${String(n + 1).padStart(2, '0')}.prod.internal`,
      pid: 4_100 + n,
      state: 'heartbeat',
      concurrency: 8,
      activeJobs: rng.int(0, 8),
      queues: n % 4 === 0 ? ['reports', 'billing'] : n % 2 === 0 ? ['media', 'default'] : ['emails', 'default'],
      metadata: { sw_ident: 'py-celery', sw_ver: '5.4.0', sw_sys: 'Linux', loadavg: [rng.next() * 4, rng.next() * 4, rng.next() * 4], freq: 2.0 },
    },
  };
}

function queueSnapshot(connectionId: string, atMs: number, rng: Rng): Event {
  return {
    type: 'queue_snapshot',
    timestamp: iso(atMs),
    framework: 'celery',
    connectionId,
    queue: { name: QUEUES[rng.int(0, QUEUES.length - 1)]!, depth: rng.int(0, 2_500), consumers: rng.int(1, 8) },
  };
}

/** Celery task ids are UUID4s; `prefix` (8 chars) replaces the first group. */
function taskUuid(rng: Rng, prefix: string): string {
  return `${prefix}-${rng.hex(4)}-4${rng.hex(3)}-${'89ab'[rng.int(0, 3)]}${rng.hex(3)}-${rng.hex(12)}`;
}

/**
 * Bodies for loading a data set of jobs: job i is created at start + i * spacing (plus
 * jitter), so the data spans `spanMs` ending about now. Job 50 of every 100 is the rare task.
 */
export class JobGenerator {
  private readonly rng: Rng;
  private readonly stacktraces = new Map<number, string>();
  private readonly runTag: string;
  private nextJob = 0;
  events = 0;

  constructor(
    private readonly connectionId: string,
    readonly totalJobs: number,
    private readonly spanMs = 6 * 3_600_000,
    private readonly endMs = Date.now() - 60_000,
    seed = 20261121,
  ) {
    this.rng = new Rng(seed);
    this.runTag = randomBytes(4).toString('hex');
  }

  get jobsGenerated(): number {
    return this.nextJob;
  }

  get done(): boolean {
    return this.nextJob >= this.totalJobs;
  }

  /** Events for the next `jobs` jobs (fewer at the end), with a heartbeat and a queue snapshot. */
  nextBatch(jobs: number): Event[] {
    const rng = this.rng;
    const spacing = this.spanMs / Math.max(1, this.totalJobs);
    const start = this.endMs - this.spanMs;
    const events: Event[] = [];
    const until = Math.min(this.totalJobs, this.nextJob + jobs);
    for (; this.nextJob < until; this.nextJob++) {
      const i = this.nextJob;
      const createdMs = Math.round(start + i * spacing + rng.int(-2_000, 2_000));
      const externalId = taskUuid(rng, (this.runTag.slice(0, 2) + i.toString(16).padStart(6, '0')).slice(-8)) + (i >= 0x1000000 ? `-${i}` : '');
      for (const event of jobEvents(planJob(rng, externalId, createdMs, i % 100 === 50), this.connectionId, rng, this.stacktraces)) events.push(event);
    }
    const lastMs = Math.round(start + until * spacing);
    events.push(heartbeat(this.connectionId, lastMs, rng), queueSnapshot(this.connectionId, lastMs, rng));
    events.sort((a, b) => ((a.timestamp as string) < (b.timestamp as string) ? -1 : 1));
    this.events += events.length;
    return events;
  }

  nextBody(jobs: number): { body: string; events: number } {
    const events = this.nextBatch(jobs);
    return { body: JSON.stringify({ events }), events: events.length };
  }
}

/** How many jobs surely fit a batch of `events` events (at most 3 events per job, plus 2 extra). */
export function jobsForEvents(events: number): number {
  return Math.max(1, Math.floor((events - 2) / 3));
}

// ---------------------------------------------------------------------------------------
// Pre-built templates for timed runs

const STAMP_PLACEHOLDER = '~~~~~~~~';
const TIME_PLACEHOLDER = '^'.repeat(16);
/** pass as connectionId to build templates that stamp() addresses to any connection (UUIDs are 36 chars) */
export const CONNECTION_PLACEHOLDER = '@'.repeat(36);
export const STAMP_WIDTH = STAMP_PLACEHOLDER.length;

export interface Template {
  buffer: Buffer;
  events: number;
  /** offsets of the 8-character sequence stamp (in every externalId) */
  stampOffsets: number[];
  /** offsets of the 16-digit send time of the probe job (empty without a probe) */
  timeOffsets: number[];
  /** offsets of the connectionId (only when built with CONNECTION_PLACEHOLDER) */
  connectionOffsets: number[];
}

export interface TemplateOptions {
  connectionId: string;
  eventsPerBatch: number;
  count: number;
  seed?: number;
  /** make the first job of each template a probe: externalId `probe-<tag>-<stamp>-<sendUs>` */
  probeTag?: string;
}

function offsetsOf(buffer: Buffer, needle: string): number[] {
  const offsets: number[] = [];
  for (let at = buffer.indexOf(needle); at >= 0; at = buffer.indexOf(needle, at + needle.length)) offsets.push(at);
  return offsets;
}

/**
 * `count` distinct bodies of exactly `eventsPerBatch` events each. A body of 1 holds one
 * job event (a new job, in a random stage); bodies of 10 or more hold whole job
 * progressions plus about 0.3% heartbeats and 0.2% queue snapshots.
 */
export function buildTemplates(options: TemplateOptions): Template[] {
  const rng = new Rng(options.seed ?? 7);
  const stacktraces = new Map<number, string>();
  const templates: Template[] = [];
  const nowMs = Date.now();
  const { connectionId, eventsPerBatch } = options;
  for (let t = 0; t < options.count; t++) {
    const events: Event[] = [];
    // each template covers its own ~2 s of recent time, oldest template first
    const baseMs = nowMs - (options.count - t) * 2_000;
    const extras = eventsPerBatch >= 10 ? Math.max(1, Math.round(eventsPerBatch * 0.005)) : 0;
    let first = true;
    while (events.length < eventsPerBatch - extras) {
      const probe = first && options.probeTag !== undefined;
      const externalId = probe ? `probe-${options.probeTag}-${STAMP_PLACEHOLDER}-${TIME_PLACEHOLDER}` : taskUuid(rng, STAMP_PLACEHOLDER);
      const plan = planJob(rng, externalId, baseMs + rng.int(0, 2_000), rng.int(0, 99) === 50);
      let lifecycle = jobEvents(plan, connectionId, rng, stacktraces);
      if (eventsPerBatch < 10) lifecycle = [lifecycle[rng.int(0, lifecycle.length - 1)]!];
      const room = eventsPerBatch - extras - events.length;
      // a probe must be a job event that is sure to be published: keep its events whole when possible
      events.push(...lifecycle.slice(0, room));
      first = false;
    }
    for (let e = 0; e < extras; e++) {
      const atMs = baseMs + rng.int(0, 2_000);
      events.push(e % 5 < 3 ? heartbeat(connectionId, atMs, rng) : queueSnapshot(connectionId, atMs, rng));
    }
    events.sort((a, b) => ((a.timestamp as string) < (b.timestamp as string) ? -1 : 1));
    const buffer = Buffer.from(JSON.stringify({ events }));
    const stampOffsets = offsetsOf(buffer, STAMP_PLACEHOLDER);
    const timeOffsets = offsetsOf(buffer, TIME_PLACEHOLDER);
    const connectionOffsets = connectionId === CONNECTION_PLACEHOLDER ? offsetsOf(buffer, CONNECTION_PLACEHOLDER) : [];
    templates.push({ buffer, events: events.length, stampOffsets, timeOffsets, connectionOffsets });
  }
  return templates;
}

const HEX = '0123456789abcdef';
let sequenceCounter = 0;

/** Request sequence numbers, unique within this process (stamps never repeat across runs of one bench). */
export function nextSequence(): number {
  return sequenceCounter++;
}

/**
 * Writes the request sequence number (and the send time, for probes; and the connectionId,
 * for templates built with CONNECTION_PLACEHOLDER) into a template, in place.
 */
export function stamp(template: Template, sequence: number, sendUs?: number, connectionId?: string): Buffer {
  const buffer = template.buffer;
  let n = sequence >>> 0;
  // 8 lower-case hex digits, so the externalId still looks like a UUID
  const digits = new Uint8Array(STAMP_WIDTH);
  for (let i = STAMP_WIDTH - 1; i >= 0; i--) {
    digits[i] = HEX.charCodeAt(n & 15);
    n >>>= 4;
  }
  for (const offset of template.stampOffsets) buffer.set(digits, offset);
  if (sendUs !== undefined && template.timeOffsets.length > 0) {
    const time = Buffer.from(String(Math.round(sendUs)).padStart(16, '0'));
    for (const offset of template.timeOffsets) buffer.set(time, offset);
  }
  if (connectionId !== undefined && template.connectionOffsets.length > 0) {
    const id = Buffer.from(connectionId);
    if (id.byteLength !== CONNECTION_PLACEHOLDER.length) throw new Error(`connectionId '${connectionId}' is not ${CONNECTION_PLACEHOLDER.length} bytes long`);
    for (const offset of template.connectionOffsets) buffer.set(id, offset);
  }
  return buffer;
}

/** Average body size of a set of templates, in bytes. */
export function averageBytes(templates: readonly Template[]): number {
  return templates.reduce((sum, t) => sum + t.buffer.byteLength, 0) / Math.max(1, templates.length);
}
