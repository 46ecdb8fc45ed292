import { describe, expect, test } from 'bun:test';
import { JobsById } from '../../actors/connection/jobs-by-id.ts';
import { SeededRandom } from '../../persistence/seeded-random.ts';

interface Job {
  id: string;
}

const jobWithId = (id: string): Job => ({ id });
const idOf = (job: Job): string => job.id;

describe('jobs by id', () => {
  test('given random inserts and removals, then lookups, size and id order match a Map', () => {
    const random = new SeededRandom(11);
    const byId = new JobsById(idOf);
    const reference = new Map<string, Job>();
    for (let step = 0; step < 4000; step++) {
      const id = `id-${String(Math.floor(random.next() * 1500)).padStart(5, '0')}`;
      const present = reference.get(id);
      if (present === undefined) {
        const job = jobWithId(id);
        byId.insert(job);
        reference.set(id, job);
      } else if (random.next() < 0.5) {
        expect(byId.remove(present)).toBe(true);
        reference.delete(id);
      }
      if (step % 500 === 0) byId.checkInvariants();
    }
    byId.checkInvariants();
    expect(byId.size).toBe(reference.size);
    for (let n = 0; n < 1500; n++) {
      const id = `id-${String(n).padStart(5, '0')}`;
      expect(byId.get(id)).toBe(reference.get(id));
    }
    expect([...byId.values()].map((job) => job.id)).toEqual([...reference.keys()].sort());
    expect(byId.remove(jobWithId('id-absent'))).toBe(false);
  });

  test('given jobs in id order, then loadSorted finds each; out of order or repeated ids are refused', () => {
    const jobs = Array.from({ length: 1234 }, (_, n) => jobWithId(`0190-${String(n).padStart(6, '0')}`));
    const byId = new JobsById(idOf);
    byId.loadSorted(jobs);
    byId.checkInvariants();
    expect(jobs.every((job) => byId.get(job.id) === job)).toBe(true);
    expect(byId.get('0190-999999')).toBeUndefined();
    byId.insert(jobWithId('0190-000000x'));
    expect(byId.get('0190-000000x')?.id).toBe('0190-000000x');
    expect(() => new JobsById(idOf).loadSorted([jobWithId('b'), jobWithId('a')])).toThrow('out of id order');
    expect(() => new JobsById(idOf).loadSorted([jobWithId('a'), jobWithId('a')])).toThrow('repeated');
    expect(() => byId.loadSorted([])).toThrow('empty');
  });
});
