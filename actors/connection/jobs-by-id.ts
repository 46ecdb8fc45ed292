/**
 * A connection's jobs by id: a chunked sorted array of the jobs in id order (see
 * block-list.ts) rather than a Map. Ids are time-ordered UUIDv7, so a new job appends at
 * the end; a lookup is two binary searches. At a million jobs a Map entry cost ~68 bytes
 * and recovery spent about a third of its index building inserting into it; here an
 * entry is one 8-byte slot, and recovery fills blocks from the id-sorted jobs.
 */
import { BlockList } from '../jobs/block-list.ts';
import type { Job } from './job-record.ts';

const BLOCK_CAPACITY = 500;
const idOf = (job: Job): string => job.id;

export class JobsById {
  // Every entry's key is null: the order is by id alone.
  private readonly list = new BlockList<Job>(idOf, BLOCK_CAPACITY, null);

  get size(): number {
    return this.list.size;
  }

  get(id: string): Job | undefined {
    return this.list.find(null, id);
  }

  /** The caller makes sure no job with this id is present. */
  insert(job: Job): void {
    this.list.insert(null, job);
  }

  remove(job: Job): boolean {
    return this.list.remove(null, job);
  }

  /** Fills an empty set from jobs in ascending id order, with no id twice. */
  loadSorted(jobs: readonly Job[]): void {
    if (this.list.size > 0) throw new Error('JobsById.loadSorted needs an empty set');
    for (let index = 1; index < jobs.length; index++) {
      if (jobs[index - 1]!.id >= jobs[index]!.id) throw new Error(`JobsById.loadSorted: job ${jobs[index]!.id} is out of id order or repeated`);
    }
    this.list.fill(new Array(jobs.length).fill(null), jobs, 0, jobs.length);
  }

  /** In id order; must not be changed while iterating. */
  values(): IterableIterator<Job> {
    return this.list.items();
  }

  /** In id order, as an array that later changes do not affect (a snapshot's capture). */
  toArray(): Job[] {
    return this.list.toArray();
  }

  checkInvariants(): void {
    this.list.checkInvariants('by id', (key) => key === null);
  }
}
