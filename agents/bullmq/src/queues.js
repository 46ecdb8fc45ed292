// Queue depth from BullMQ's own lists and sets, read with plain commands (nothing is
// written): depth = waiting + paused + prioritized; the other counts go in extensions.
// An unchanged snapshot is re-sent only every half minute.
import { queueKeys } from './keys.js';
import { cutMarked, isoFromMs, QUEUE_CHARS } from './limits.js';
import { logger } from './log.js';

const log = logger('queues');
const UNCHANGED_RESEND_MS = 30_000;

export class QueueMonitor {
  /** @param {import('ioredis').Redis} redis @param {string} prefix @param {string} connectionId @param {() => Map<string, number>} consumers */
  constructor(redis, prefix, connectionId, consumers) {
    this.redis = redis;
    this.prefix = prefix;
    this.connectionId = connectionId;
    this.consumers = consumers;
    /** queue -> [what was sent, when] */
    this.lastSent = new Map();
    this.failing = false;
  }

  /** @param {string[]} queues */
  async snapshots(queues) {
    if (queues.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const queue of queues) {
      const keys = queueKeys(this.prefix, queue);
      pipeline.llen(keys.wait).llen(keys.paused).zcard(keys.prioritized).zcard(keys.delayed).llen(keys.active);
      pipeline.zcard(keys.failed).zcard(keys.completed).zcard(keys.waitingChildren).hget(keys.meta, 'paused');
    }
    let replies;
    try {
      replies = (await pipeline.exec()) ?? [];
    } catch (error) {
      if (!this.failing) log.warn(`queue depth: Redis unreachable (${/** @type {Error} */ (error).message}); retrying every cycle`);
      this.failing = true;
      return [];
    }
    this.failing = false;
    const consumers = this.consumers();
    const now = Date.now();
    const events = [];
    queues.forEach((queue, index) => {
      const values = replies.slice(index * 9, index * 9 + 9).map(([error, value]) => (error ? null : value));
      const count = (at) => (typeof values[at] === 'number' ? values[at] : 0);
      const extensions = {
        waiting: count(0) + count(1),
        prioritized: count(2),
        delayed: count(3),
        active: count(4),
        failed: count(5),
        completed: count(6),
        waitingChildren: count(7),
        paused: values[8] === '1',
      };
      const snapshot = { name: cutMarked(queue, QUEUE_CHARS), depth: count(0) + count(1) + count(2), consumers: consumers.get(queue) ?? 0, extensions };
      const text = JSON.stringify(snapshot);
      const last = this.lastSent.get(queue);
      if (last && last[0] === text && now - last[1] < UNCHANGED_RESEND_MS) return;
      this.lastSent.set(queue, [text, now]);
      events.push({ type: 'queue_snapshot', timestamp: isoFromMs(now), framework: 'bullmq', connectionId: this.connectionId, queue: snapshot });
    });
    return events;
  }
}
