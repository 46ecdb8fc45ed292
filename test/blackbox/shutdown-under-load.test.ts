/**
 * A clean stop (SIGTERM) while SDKs are sending: every answer must tell the truth.
 *
 * Requests in flight when SIGTERM arrives were once answered 500 although their batch
 * was durable: the change listener published to an already closed stream hub after the
 * commit. A listener's failure must never turn an acknowledged commit into an error.
 */
import { expect, test } from 'bun:test';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  TEST_TIMEOUT_MS,
  batchOfJobs,
  createConnection,
  ingest,
  listAllJobs,
  login,
  makeDataDir,
  startService,
  cleanUpServices,
} from './service-process.ts';

const dirs = cleanUpServices();

const CLIENTS = 12;
const EVENTS_PER_BATCH = 20;
/** The race needs a request between the hubs' close and its commit; a few tries make it near-certain. */
const ATTEMPTS = 4;

interface Answer {
  prefix: string;
  status: number;
  code: string | undefined;
}

test('SIGTERM under load never answers an error for a batch it stored', async () => {
  const dataDir = makeDataDir('shutdown-500');
  dirs.push(dataDir);
  const env = { ADMIN_EMAIL, ADMIN_PASSWORD, DAILY_EVENT_LIMIT: '0' };
  let service = await startService({ dataDir, env });
  const cookie = await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(service.baseUrl, cookie, 'shutdown');

  const answered: Answer[] = [];
  const logs: string[] = [];
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (attempt > 0) service = await startService({ dataDir, env });
    let firstAck!: () => void;
    const firstAcked = new Promise<void>((resolve) => (firstAck = resolve));
    const client = async (clientNo: number): Promise<void> => {
      for (let batch = 0; ; batch++) {
        const prefix = `a${attempt}-c${clientNo}-b${batch}`;
        try {
          const { status, body } = await ingest(service.baseUrl, connection.apiKey, batchOfJobs(connection.id, prefix, EVENTS_PER_BATCH));
          answered.push({ prefix, status, code: (body.error as { code?: string } | undefined)?.code });
          if (status === 200) firstAck();
        } catch {
          return; // no answer: the service is gone
        }
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, clientNo) => client(clientNo));
    await firstAcked;
    await Bun.sleep(200);
    service.proc.kill('SIGTERM');
    expect(await service.waitForExit(30_000)).toBe(0);
    await Promise.all(clients);
    logs.push(service.output);
    if (answered.some((each) => each.status !== 200)) break;
  }

  const restarted = await startService({ dataDir, env });
  const present = new Set((await listAllJobs(restarted.baseUrl, cookie)).map((job) => job.externalId));
  expect(await restarted.stop()).toBe(0);
  const errors = answered.filter((each) => each.status !== 200);
  const storedButRefused = errors.filter((each) => present.has(`${each.prefix}-0`));
  const internalErrors = errors.filter((each) => each.status === 500);
  expect({ internalErrors, storedButRefused }).toEqual({ internalErrors: [], storedButRefused: [] });
  expect(logs.join('')).not.toContain('unhandled error');
}, TEST_TIMEOUT_MS);
