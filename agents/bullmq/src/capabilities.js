// What this agent can do in BullMQ, command type by command type, as it tells jobwatch at
// its start (`PUT /api/agent/capabilities`) and as it answers a command it cannot carry
// out: `unsupported` with the same reason. The dashboard shows each control BullMQ cannot
// do disabled with that reason.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Queue } from 'bullmq';

/** This agent's version, from its package.json (jobwatch shows it beside the capabilities). */
export const AGENT_VERSION = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
/** The bullmq the agent runs with. */
export const BULLMQ_VERSION = JSON.parse(readFileSync(createRequire(import.meta.url).resolve('bullmq/package.json'), 'utf8')).version;

export const JOB_COMMANDS = ['revoke', 'retry', 'promote', 'delete', 'kill'];
export const QUEUE_COMMANDS = ['queue.pause', 'queue.resume', 'queue.clean', 'queue.retry_failed', 'queue.concurrency'];

const NO_REMOTE_CONTROL =
  'BullMQ has no remote control of its workers: a Worker runs inside your app and takes no commands from outside (stop or scale it where it runs)';

/** Whether the installed bullmq limits a queue's jobs running at once across its workers. */
export function hasGlobalConcurrency() {
  return typeof Queue.prototype.setGlobalConcurrency === 'function' && typeof Queue.prototype.removeGlobalConcurrency === 'function';
}

/**
 * Every command type jobwatch knows, and whether this agent carries it out in BullMQ.
 * @param {boolean} [globalConcurrency]
 * @returns {Record<string, {supported: true} | {supported: false, reason: string}>}
 */
export function bullmqControls(globalConcurrency = hasGlobalConcurrency()) {
  /** @type {Record<string, {supported: true} | {supported: false, reason: string}>} */
  const controls = {};
  for (const type of [...JOB_COMMANDS, ...QUEUE_COMMANDS]) controls[type] = { supported: true };
  if (!globalConcurrency) controls['queue.concurrency'] = { supported: false, reason: `bullmq ${BULLMQ_VERSION} has no global concurrency (setGlobalConcurrency came with bullmq 5.x)` };
  controls['task.rate_limit'] = { supported: false, reason: 'BullMQ limits are per queue, not per job name: use the queue concurrency' };
  controls['worker.quiet'] = { supported: false, reason: NO_REMOTE_CONTROL };
  controls['worker.stop'] = { supported: false, reason: NO_REMOTE_CONTROL };
  controls['worker.pool'] = { supported: false, reason: NO_REMOTE_CONTROL };
  return controls;
}
