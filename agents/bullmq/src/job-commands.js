// The commands on one job, carried out through bullmq's own Job API (its scripts keep the
// queue's sets, the job's hash and the event stream consistent), given the job and the
// state BullMQ lists it in. Each answers an outcome; none is `done` unless BullMQ did it.
//
// - revoke: a waiting, prioritized or delayed job is removed (its `removed` event makes it
//   cancelled in jobwatch); a running one cannot be: its worker holds the lock, and BullMQ
//   has no remote cancel.
// - retry: a failed job goes back to waiting; a job waiting to retry (delayed after a run,
//   its backoff) runs now (`promote`).
// - promote ("run now"): a delayed job goes to waiting now.
// - delete: the job is removed from BullMQ in any state but running.
// - kill: a job waiting to retry is failed for good (kill-delayed.js).
import { killDelayed } from './kill-delayed.js';

const REVOCABLE = new Set(['waiting', 'prioritized', 'delayed', 'paused']);
export const RUNNING_REASON =
  'a running BullMQ job cannot be cancelled from outside its worker (the worker holds the job lock and BullMQ has no remote cancel); it runs to its end';

/**
 * @param {string} type @param {import('bullmq').Job} job @param {string} state BullMQ's state of the job
 * @param {{redis: import('ioredis').Redis, keys: ReturnType<typeof import('./keys.js').queueKeys>}} where
 * @returns {Promise<{status: 'done'} | {status: 'failed', reason: string}>}
 */
export async function runJobCommand(type, job, state, where) {
  switch (type) {
    case 'revoke':
      if (state === 'active') return failed(RUNNING_REASON);
      if (!REVOCABLE.has(state)) return failed(`the job is ${state} in BullMQ; only a waiting, prioritized or delayed job can be revoked`);
      return removed(job);
    case 'retry':
      if (state === 'failed') {
        await job.retry('failed');
        return done();
      }
      if (state === 'delayed' && job.attemptsMade > 0) {
        await job.promote(); // "retry now": its backoff ends now
        return done();
      }
      return failed(`the job is ${describe(job, state)} in BullMQ; only a failed job, or one waiting to retry, can be retried`);
    case 'promote':
      if (state !== 'delayed') return failed(`the job is ${state} in BullMQ; only a delayed job can be run now`);
      await job.promote();
      return done();
    case 'delete':
      if (state === 'active') return failed(`the job is running: ${RUNNING_REASON}`);
      return removed(job);
    case 'kill': {
      if (state !== 'delayed' || !(job.attemptsMade > 0)) return failed(`the job is ${describe(job, state)} in BullMQ; only a job waiting to retry can be killed`);
      const answer = await killDelayed(where.redis, where.keys, /** @type {string} */ (job.id));
      if (answer === 1) return done();
      return failed(answer === 0 ? 'the job left the delayed set before it could be failed (its backoff ended, or it was removed)' : 'not found: the job\'s hash is gone from BullMQ');
    }
    default:
      throw new Error(`not a job command: ${type}`);
  }
}

/** A delayed job that never ran is scheduled; one that ran is waiting to retry. */
function describe(job, state) {
  if (state !== 'delayed') return state;
  return job.attemptsMade > 0 ? 'waiting to retry (delayed by its backoff)' : 'delayed before its first run (scheduled)';
}

async function removed(job) {
  try {
    await job.remove({ removeChildren: false });
  } catch (error) {
    if (/locked/i.test(/** @type {Error} */ (error).message)) return failed(`the job started running before it could be removed: ${RUNNING_REASON}`);
    throw error;
  }
  return done();
}

const done = () => /** @type {{status: 'done'}} */ ({ status: 'done' });
const failed = (reason) => /** @type {{status: 'failed', reason: string}} */ ({ status: 'failed', reason });
