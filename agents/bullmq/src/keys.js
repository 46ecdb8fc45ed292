// BullMQ's Redis key layout (bullmq's QueueKeys): `<prefix>:<queue>:<kind>` for a queue's
// lists, sets and event stream, `<prefix>:<queue>:<job id>` for a job's hash.
export const STATE_KEYS = ['wait', 'paused', 'active', 'delayed', 'prioritized', 'completed', 'failed', 'waiting-children'];

/** @param {string} prefix @param {string} queue */
export function queueKeys(prefix, queue) {
  const base = `${prefix}:${queue}:`;
  return {
    base,
    events: `${base}events`,
    meta: `${base}meta`,
    id: `${base}id`,
    wait: `${base}wait`,
    paused: `${base}paused`,
    active: `${base}active`,
    delayed: `${base}delayed`,
    prioritized: `${base}prioritized`,
    completed: `${base}completed`,
    failed: `${base}failed`,
    waitingChildren: `${base}waiting-children`,
    /** @param {string} jobId */
    job: (jobId) => `${base}${jobId}`,
  };
}
