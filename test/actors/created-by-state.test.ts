import { describe, expect, test } from 'bun:test';
import type { GroupFields } from '../../actors/connection/job-groups.ts';
import type { Job } from '../../actors/connection/job-record.ts';
import { JobStore } from '../../actors/connection/job-store.ts';
import type { JobEvent } from '../../actors/ingest/normalized-event.ts';
import { FINISHED_STATES, type JobState } from '../../actors/ingest/states.ts';
import { compareInOrder, type IndexPosition, type SortOrder } from '../../actors/jobs/sorted-index.ts';
import { SeededRandom } from '../../persistence/seeded-random.ts';
import { T0 } from '../support/test-app.ts';

const STATES: JobState[] = ['queued', 'active', 'completed', 'failed', 'retrying'];
const QUEUES = ['mail', 'reports', 'media'];

/** Jobs by createdAt, as the contract orders a list (ties by id): the reference for the store's scans. */
function byCreatedAt(store: JobStore, order: SortOrder, after?: IndexPosition): Job[] {
  const jobs = [...store.values()].sort((a, b) => compareInOrder(order, a.createdAtMs, a.id, b.createdAtMs, b.id));
  return after === undefined ? jobs : jobs.filter((job) => compareInOrder(order, job.createdAtMs, job.id, after.key, after.id) > 0);
}

/** A store after random creations, state changes (some older than the job's newest event), createdAt changes and removals. */
function randomStore(seed: number, groupsMax?: number): JobStore {
  const random = new SeededRandom(seed);
  const store = new JobStore('c', groupsMax);
  const event = (externalId: string, fields: Partial<JobEvent>): JobEvent => ({
    kind: 'job',
    atMs: T0 + random.int(100) * 1000,
    framework: 'celery',
    externalId,
    name: `tasks.${random.int(4)}`,
    state: STATES[random.int(STATES.length)]!,
    queue: QUEUES[random.int(QUEUES.length)]!,
    ...fields,
  });
  let created = 0;
  for (let step = 0; step < 300; step++) {
    const roll = random.next();
    if (roll < 0.45 || store.size === 0) {
      const externalId = `job-${created}`;
      store.applyEvent(event(externalId, { newJobId: `id-${String(created++).padStart(4, '0')}` }));
    } else {
      const jobs = [...store.values()];
      const job = jobs[random.int(jobs.length)]!;
      if (roll < 0.9) store.applyEvent(event(job.externalId, roll < 0.6 ? { createdAtMs: T0 + random.int(100) * 1000 } : {}));
      else store.remove(store.rowOf(job.id));
    }
  }
  return store;
}

describe('the createdAt order kept per state', () => {
  for (const [label, groupsMax] of [['within the groups bound', undefined], ['past the groups bound (every state visited)', 3]] as const) {
    for (let seed = 1; seed <= 8; seed++) {
      test(`${label}, seed ${seed}: lists by createdAt, filtered or not, from any position, are the jobs in (createdAt, id) order`, () => {
        const store = randomStore(seed, groupsMax);
        const filters: Array<((job: GroupFields) => boolean) | undefined> = [
          undefined,
          (job) => job.state === 'failed',
          (job) => job.queue === 'mail',
          (job) => job.state === 'active' && job.name === 'tasks.1',
          (job) => job.name === 'no such task',
        ];
        const someJobs = [...store.values()].slice(0, 6);
        const positions: Array<IndexPosition | undefined> = [undefined, ...someJobs.map((job) => ({ key: job.createdAtMs, id: job.id }))];
        for (const order of ['asc', 'desc'] as const) {
          for (const after of positions) {
            for (const matches of filters) {
              const expected = byCreatedAt(store, order, after).filter((job) => matches === undefined || matches(job));
              const listed = [...store.indexes.createdAt.scan(order, after, matches)];
              expect(listed.map((entry) => store.table.id(entry.item))).toEqual(expected.map((job) => job.id));
              expect(listed.every((entry) => entry.key === store.table.createdAtMsOf(entry.item))).toBe(true);
            }
          }
        }
        expect(store.indexes.createdAt.size).toBe(store.size);
        store.table.checkInvariants();
      });
    }
  }

  test('oldestOf reads the jobs of the given states only, oldest createdAt first, following every state change', () => {
    for (let seed = 1; seed <= 8; seed++) {
      const store = randomStore(seed);
      const finished = byCreatedAt(store, 'asc').filter((job) => FINISHED_STATES.has(job.state));
      expect([...store.oldestOf(FINISHED_STATES)].map((entry) => store.table.id(entry.item))).toEqual(finished.map((job) => job.id));
      const queued = byCreatedAt(store, 'asc').filter((job) => job.state === 'queued');
      expect([...store.oldestOf(['queued'])].map((entry) => store.table.id(entry.item))).toEqual(queued.map((job) => job.id));
    }
  });
});
