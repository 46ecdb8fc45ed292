/**
 * A clean stop (SIGTERM) while SDKs are sending: every answer must tell the truth. A
 * request in flight when the signal arrives is either answered 200 and durable, or
 * refused with a status that is not 500 and not stored; a 500 or a refusal of a batch
 * that is stored after the restart would make an SDK resend or drop data wrongly.
 *
 * The check means something only if requests were in flight at the signal and got an
 * answer after it, so the test counts them and repeats the stop until there were some.
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
/** Stops under load until requests straddled the signal; one try is usually enough. */
const ATTEMPTS_MAX = 6;

interface Answer {
  prefix: string;
  attempt: number;
  /** performance.now() when the request was sent and when its answer came */
  sentAt: number;
  answeredAt: number;
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
  /** answers to requests sent before the signal and answered after it: the race the test is about */
  const straddling: Answer[] = [];
  const logs: string[] = [];
  for (let attempt = 0; attempt < ATTEMPTS_MAX && straddling.length === 0; attempt++) {
    if (attempt > 0) service = await startService({ dataDir, env });
    let firstAck!: () => void;
    const firstAcked = new Promise<void>((resolve) => (firstAck = resolve));
    const client = async (clientNo: number): Promise<void> => {
      for (let batch = 0; ; batch++) {
        const prefix = `a${attempt}-c${clientNo}-b${batch}`;
        const sentAt = performance.now();
        try {
          const { status, body } = await ingest(service.baseUrl, connection.apiKey, batchOfJobs(connection.id, prefix, EVENTS_PER_BATCH));
          answered.push({ prefix, attempt, sentAt, answeredAt: performance.now(), status, code: (body.error as { code?: string } | undefined)?.code });
          if (status === 200) firstAck();
        } catch {
          return; // no answer: the service is gone
        }
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, clientNo) => client(clientNo));
    await firstAcked;
    await Bun.sleep(200);
    const signalAt = performance.now();
    service.proc.kill('SIGTERM');
    expect(await service.waitForExit(30_000)).toBe(0);
    await Promise.all(clients);
    logs.push(service.output);
    straddling.push(...answered.filter((each) => each.attempt === attempt && each.sentAt < signalAt && each.answeredAt > signalAt));
  }
  if (straddling.length === 0) throw new Error(`in ${ATTEMPTS_MAX} stops under load, no request was in flight at SIGTERM and answered after it`);

  const restarted = await startService({ dataDir, env });
  const present = new Set((await listAllJobs(restarted.baseUrl, cookie)).map((job) => job.externalId));
  expect(await restarted.stop()).toBe(0);
  const errors = answered.filter((each) => each.status !== 200);
  const storedButRefused = errors.filter((each) => present.has(`${each.prefix}-0`));
  const internalErrors = errors.filter((each) => each.status === 500);
  const acknowledgedButLost = answered.filter((each) => each.status === 200 && !present.has(`${each.prefix}-0`));
  expect({ internalErrors, storedButRefused, acknowledgedButLost }).toEqual({ internalErrors: [], storedButRefused: [], acknowledgedButLost: [] });
  expect(logs.join('')).not.toContain('unhandled error');
  console.log(`shutdown-under-load: ${straddling.length} requests in flight at SIGTERM were answered after it (${straddling.filter((each) => each.status === 200).length} with 200)`);
}, TEST_TIMEOUT_MS);
