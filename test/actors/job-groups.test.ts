import { describe, expect, test } from 'bun:test';
import type { GroupFields } from '../../actors/connection/job-groups.ts';
import { JobStore } from '../../actors/connection/job-store.ts';
import type { JobEvent } from '../../actors/ingest/normalized-event.ts';
import { T0 } from '../support/test-app.ts';

const event = (externalId: string, fields: Partial<JobEvent>): JobEvent => ({
  kind: 'job',
  atMs: T0,
  framework: 'celery',
  externalId,
  name: 'tasks.a',
  state: 'queued',
  newJobId: `id-${externalId}`,
  ...fields,
});

function storeWith(groupsMax?: number) {
  const store = new JobStore('c', groupsMax);
  store.applyEvent(event('1', { name: 'tasks.email', queue: 'mail', state: 'failed' }));
  store.applyEvent(event('2', { name: 'tasks.email', queue: 'mail', state: 'completed' }));
  store.applyEvent(event('3', { name: 'reports.daily', queue: 'mail', state: 'failed', workerId: 'w1' }));
  store.applyEvent(event('4', { name: 'tasks.resize', state: 'failed' }));
  store.applyEvent({ ...event('2', { name: 'tasks.email', queue: 'mail', state: 'failed' }), atMs: T0 + 1 });
  return store;
}

describe('job totals by group', () => {
  for (const [label, groupsMax] of [['within the bound', undefined], ['past the bound (scan fallback)', 2]] as const) {
    test(`${label}: totals for combined filters follow every change`, () => {
      const store = storeWith(groupsMax);
      expect(store.countWhere((job) => job.state === 'failed')).toBe(4);
      expect(store.countWhere((job) => job.state === 'failed' && job.queue === 'mail')).toBe(3);
      expect(store.countWhere((job) => job.name.includes('email'))).toBe(2);
      expect(store.countWhere((job) => job.workerId === 'w1')).toBe(1);
      store.remove(store.rowOfExternalId('1'));
      expect(store.countWhere((job) => job.name.includes('email') && job.state === 'failed')).toBe(1);
    });
  }
});

describe('job totals after a bulk load (recovery)', () => {
  for (const [label, groupsMax] of [['within the bound', undefined], ['past the bound (scan fallback)', 2]] as const) {
    test(`${label}: a store loaded with loadAll counts like the one that built the jobs one by one`, () => {
      const built = storeWith(groupsMax);
      built.applyEvent(event('5', { name: 'tasks.email', queue: 'mail', state: 'failed', workerId: 'w1' }));
      built.applyEvent(event('6', { name: 'tasks.email', queue: 'mail', state: 'failed', workerId: 'w1', framework: 'bullmq' }));
      const loaded = new JobStore('c', groupsMax);
      loaded.loadAll([...built.values()].map((job) => loaded.table.insert(job)));
      const filters: Array<(job: GroupFields) => boolean> = [
        (job) => job.state === 'failed',
        (job) => job.state === 'failed' && job.queue === 'mail',
        (job) => job.queue === null,
        (job) => job.workerId === 'w1' && job.framework === 'celery',
        (job) => job.framework === 'bullmq',
        () => true,
      ];
      expect(filters.map((filter) => loaded.countWhere(filter))).toEqual(filters.map((filter) => built.countWhere(filter)));
      expect(loaded.countWhere((job) => job.state === 'failed' && job.queue === 'mail')).toBe(5);
      expect(loaded.queuedPerQueue.get('mail')).toBe(built.queuedPerQueue.get('mail'));
    });
  }
});
