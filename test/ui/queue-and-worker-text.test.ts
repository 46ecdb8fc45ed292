/** How the Queues and Workers pages put figures and names into words. */
import { describe, expect, test } from 'bun:test';
import { jobSystemFacts, rate } from '../../ui/src/pages/queues/queue-figures.ts';
import { workerTitle } from '../../ui/src/pages/workers/worker-title.ts';

describe('queue throughput', () => {
  test('per minute when there is at least one a minute, else per hour; never a row of zeros', () => {
    expect(rate(null)).toBe('–');
    expect(rate(12.7 / 60)).toBe('13/min');
    expect(rate(2.1 / 60)).toBe('2.1/min');
    expect(rate(1 / 60)).toBe('1/min');
    // 126 jobs over a day: 5.25 an hour, where "0.09/min" reads as nothing
    expect(rate(126 / 86_400)).toBe('5.3/h');
    expect(rate(40 / 3_600)).toBe('40/h');
    expect(rate(2 / 3_600)).toBe('2/h');
    expect(rate(1 / (7 * 86_400))).toBe('< 0.1/h');
  });
});

describe("what the job system counts, from a queue snapshot's extensions", () => {
  test("BullMQ's counts: waiting, delayed and failed always, the others when not 0 (paused is the queue's badge)", () => {
    const counts = { waiting: 1200, prioritized: 0, delayed: 3, active: 2, failed: 0, completed: 40, waitingChildren: 4, paused: false };
    expect(jobSystemFacts(counts)).toBe('1,200 waiting · 3 delayed · 0 failed · 2 active · 4 waiting for children');
    // paused or not is the queue's badge (its `paused`, which a pause or resume carried out says too), not a fact of the extensions
    expect(jobSystemFacts({ ...counts, active: 0, waitingChildren: 0, prioritized: 7, paused: true })).toBe('1,200 waiting · 3 delayed · 0 failed · 7 prioritized');
  });
  test("Sidekiq's latency is how long the oldest job has waited; a Celery queue sends none", () => {
    expect(jobSystemFacts({ latencyMs: 4_200 })).toBe('oldest waited 4.2 s');
    expect(jobSystemFacts({})).toBe('');
    expect(jobSystemFacts({ waiting: 'many', paused: 'yes' })).toBe('');
  });
});

describe('worker titles', () => {
  test("a worker's name (BullMQ's), its host and its pid, as far as they are known", () => {
    expect(workerTitle({ hostname: 'app-1', pid: null, metadata: { workerName: 'mailer' } })).toBe('mailer on app-1');
    expect(workerTitle({ hostname: 'app-1', pid: null, metadata: { workerName: null } })).toBe('app-1');
    expect(workerTitle({ hostname: 'web-1', pid: 4242, metadata: { tag: 'app' } })).toBe('web-1 · pid 4242');
    // Celery names a worker by its node name, which is also its hostname: said once
    expect(workerTitle({ hostname: 'celery@web-1', pid: 4100, metadata: { workerName: 'celery@web-1' } })).toBe('celery@web-1 · pid 4100');
  });
});
