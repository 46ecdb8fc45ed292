/**
 * The stream's events carry what the document says: the `data` of `job`, `worker` and
 * `queue` events match the StreamJob, StreamWorker and StreamQueue schemas.
 */
import { expect, test } from 'bun:test';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { jobEvent, queueEvent, workerEvent } from '../support/events.ts';
import { SseMessageReader } from '../support/sse-message-reader.ts';
import { BASE, testApp, T0 } from '../support/test-app.ts';

const SCHEMA_OF_EVENT: Record<string, string> = { job: 'StreamJob', worker: 'StreamWorker', queue: 'StreamQueue' };

test('job, worker and queue events match their documented schemas', async () => {
  const t = await testApp({ limits: { dailyEventLimit: 0 } });
  const schemas = (await t.request('GET', '/openapi.json')).json.components.schemas;
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  const cookie = await t.login();
  const c = await t.createConnection(cookie, 'prod');
  const aborted = new AbortController();
  const response = await t.app.handle(new Request(`${BASE}/api/events/stream`, { headers: { cookie }, signal: aborted.signal }));
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  const reader = new SseMessageReader(response.body!);
  try {
    await t.ingest(c.apiKey, [
      jobEvent(c.id, T0, { workerId: 'worker-1', attempt: 2, extensions: { eta: T0 + 60_000 } }),
      workerEvent(c.id, T0, { pid: 42, concurrency: 4, queues: ['default'], metadata: { pool: 'prefork' } }),
      queueEvent(c.id, T0, { consumers: 1 }),
    ]);
    const seen = new Map<string, unknown>();
    while (seen.size < 3) {
      const [message] = await reader.nextEvents(1);
      const schema = SCHEMA_OF_EVENT[message!.event!];
      expect(schema).toBeDefined();
      const validate = ajv.compile(schemas[schema!]);
      const data = JSON.parse(message!.data!);
      expect({ event: message!.event, valid: validate(data), errors: ajv.errorsText(validate.errors) }).toEqual({ event: message!.event, valid: true, errors: 'No errors' });
      seen.set(message!.event!, data);
    }
    // and the schemas can refuse: a job is not a worker
    expect(ajv.compile(schemas.StreamWorker)(seen.get('job'))).toBe(false);
  } finally {
    aborted.abort();
  }
});
