/**
 * A connection with a queue, a worker and jobs in every state a control acts on, and the
 * routes a dashboard and an agent use: for the tests of the controls of jobs, queues,
 * workers and tasks (the agent here is the test, answering through the agent endpoints).
 */
import { jobEvent, queueEvent, workerEvent } from '../support/events.ts';
import { recordingLog } from '../support/recording-log.ts';
import { testApp, T0, type TestApp } from '../support/test-app.ts';

export interface ControlFixture {
  t: TestApp;
  c: { id: string; apiKey: string };
  cookie: string;
  log: ReturnType<typeof recordingLog>;
  /** the job id of an externalId */
  jobId(externalId: string): string;
  queueId(name?: string): string;
  workerId(externalId?: string): string;
  post(path: string, body?: unknown): Promise<{ status: number; json: any }>;
  get(path: string): Promise<{ status: number; json: any }>;
  /** the agent's pending commands */
  commands(): Promise<any[]>;
  ack(outcomes: unknown[]): Promise<{ status: number; json: any }>;
  report(controls: Record<string, unknown>, framework?: string): Promise<{ status: number; json: any }>;
  ingest(events: unknown[]): Promise<unknown>;
}

/** `framework` names the job system of every event (default bullmq). */
export async function controlFixture(options: { framework?: string; commandConfirmMs?: number } = {}): Promise<ControlFixture> {
  const framework = options.framework ?? 'bullmq';
  const log = recordingLog();
  const t = await testApp({ log, limits: { dailyEventLimit: 0, commandConfirmMs: options.commandConfirmMs } });
  const cookie = await t.login();
  const c = await t.createConnection(cookie, 'prod');
  const job = (externalId: string, state: string, extra: Record<string, unknown> = {}) =>
    jobEvent(c.id, T0 - 5_000, { externalId, name: 'send', queue: 'emails', state, ...extra }, { framework });
  await t.ingest(c.apiKey, [
    job('emails:1', 'scheduled', { extensions: { eta: T0 + 60_000 } }),
    job('emails:2', 'retrying', { error: 'smtp down', attempt: 2 }),
    job('emails:3', 'failed', { error: 'bad address' }),
    job('emails:4', 'queued'),
    job('emails:5', 'active'),
    job('emails:6', 'completed'),
    job('emails:7', 'failed', { error: 'bad address' }),
    { ...queueEvent(c.id, T0 - 4_000, { name: 'emails', depth: 1, extensions: { paused: false } }), framework },
    { ...workerEvent(c.id, T0 - 1_000, { externalId: 'w1@10.0.0.5:6000', hostname: '10.0.0.5', pid: 4242, queues: ['emails'] }), framework },
  ]);
  const actor = () => t.engine.connection(c.id)!;
  const agent = { authorization: `Bearer ${c.apiKey}` };
  return {
    t,
    c,
    cookie,
    log,
    jobId: (externalId) => actor().jobs.getByExternalId(externalId)!.id,
    queueId: (name = 'emails') => actor().queues.get(name)!.id,
    workerId: (externalId = 'w1@10.0.0.5:6000') => actor().workers.get(externalId)!.id,
    post: async (path, body) => {
      const answer = await t.request('POST', path, { body: body ?? {}, headers: { cookie } });
      return { status: answer.status, json: answer.json };
    },
    get: async (path) => {
      const answer = await t.request('GET', path, { headers: { cookie } });
      return { status: answer.status, json: answer.json };
    },
    commands: async () => (await t.request('GET', '/api/agent/commands', { headers: agent })).json.data,
    ack: async (outcomes) => {
      const answer = await t.request('POST', '/api/agent/commands/ack', { body: { outcomes }, headers: agent });
      return { status: answer.status, json: answer.json };
    },
    report: async (controls, reportFramework = framework) => {
      const answer = await t.request('PUT', '/api/agent/capabilities', { body: { framework: reportFramework, agentVersion: '1.2.0', controls }, headers: agent });
      return { status: answer.status, json: answer.json };
    },
    ingest: (events) => t.ingest(c.apiKey, events),
  };
}

/** Every command type a BullMQ agent reports, as the BullMQ agent does. */
export const BULLMQ_CONTROLS: Record<string, unknown> = {
  revoke: { supported: true },
  retry: { supported: true },
  promote: { supported: true },
  delete: { supported: true },
  kill: { supported: true },
  'queue.pause': { supported: true },
  'queue.resume': { supported: true },
  'queue.clean': { supported: true },
  'queue.retry_failed': { supported: true },
  'queue.concurrency': { supported: true },
  'task.rate_limit': { supported: false, reason: 'BullMQ limits are per queue: use the queue concurrency' },
  'worker.quiet': { supported: false, reason: 'BullMQ has no remote control of its workers' },
  'worker.stop': { supported: false, reason: 'BullMQ has no remote control of its workers' },
  'worker.pool': { supported: false, reason: 'BullMQ has no remote control of its workers' },
};
