/**
 * A job's attempts in words, as they are: the run it is on, the job system's own retry
 * limit, and the runs added by hand with a retry from jobwatch. Never "attempt 3 of 2": a
 * run added by hand is not one the limit allowed, and the limit is the job system's.
 */
import type { JobDetail } from '../api/types.ts';

type Attempts = Pick<JobDetail, 'attempt' | 'maxRetries' | 'manualRetries'>;

const plural = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`;

/** "3", or "3 (1 run added by hand)". */
export function attemptText(job: Attempts): string {
  return job.manualRetries > 0 ? `${job.attempt} (${plural(job.manualRetries, 'run', 'runs')} added by hand)` : String(job.attempt);
}

/** The job system's limit: "2 retries (3 attempts)", "none (1 attempt)"; null when not reported. */
export function retryLimitText(maxRetries: number | null): string | null {
  if (maxRetries === null) return null;
  const attempts = plural(maxRetries + 1, 'attempt', 'attempts');
  return maxRetries === 0 ? `none (${attempts})` : `${plural(maxRetries, 'retry', 'retries')} (${attempts})`;
}
