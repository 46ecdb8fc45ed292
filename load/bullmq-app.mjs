// The BullMQ side of load/bullmq-agent.ts, run under node with the agent's bullmq:
//   node load/bullmq-app.mjs produce <queue> <jobs per second> <seconds>
//     adds jobs with Queue.addBulk in 20 ms slices (removeOnComplete, as a busy app would)
//     and prints {"added": n, "seconds": s};
//   node load/bullmq-app.mjs xread <queue> [from]
//     the baseline: a bare XREAD loop over the queue's event stream from `from` (default:
//     new entries only), as cheap as reading it can be; prints each position it reached and
//     {"entries": n} on SIGTERM.
import { createRequire } from 'node:module';

// the bullmq and ioredis the agent installs (agents/bullmq/node_modules)
const agentRequire = createRequire(new URL('../agents/bullmq/package.json', import.meta.url));
const { Queue } = agentRequire('bullmq');
const { Redis } = agentRequire('ioredis');

const [mode, queueName, ...rest] = process.argv.slice(2);
const url = process.env.REDIS_URL;

if (mode === 'produce') {
  const rate = Number(rest[0]);
  const seconds = Number(rest[1]);
  const queue = new Queue(queueName, { connection: { url } });
  const sliceMs = 20;
  const perSlice = Math.max(1, Math.round((rate * sliceMs) / 1000));
  const started = Date.now();
  let added = 0;
  while (Date.now() - started < seconds * 1000) {
    const due = Math.floor(((Date.now() - started) / 1000) * rate);
    if (added < due) {
      const count = Math.min(perSlice * 5, due - added);
      await queue.addBulk(Array.from({ length: count }, () => ({ name: 'bench', data: {}, opts: { removeOnComplete: true, removeOnFail: 1000 } })));
      added += count;
    } else {
      await new Promise((resolve) => setTimeout(resolve, sliceMs / 2));
    }
  }
  process.stdout.write(`${JSON.stringify({ added, seconds: (Date.now() - started) / 1000 })}\n`);
  await queue.close();
} else if (mode === 'xread') {
  const redis = new Redis(url);
  await redis.ping();
  process.stdout.write('ready\n');
  let position = rest[0] ?? '$';
  let entries = 0;
  let stopping = false;
  process.on('SIGTERM', () => {
    stopping = true;
  });
  while (!stopping) {
    const reply = await redis.xread('COUNT', 2000, 'BLOCK', 200, 'STREAMS', `bull:${queueName}:events`, position);
    if (!reply) continue;
    for (const [, list] of reply) {
      entries += list.length;
      position = list[list.length - 1][0];
    }
    // a checkpoint the bench can read, like the agent's
    process.stdout.write(`${position}\n`);
  }
  process.stdout.write(`${JSON.stringify({ entries })}\n`);
  redis.disconnect();
} else {
  process.stderr.write('usage: node load/bullmq-app.mjs produce <queue> <rate> <seconds> | xread <queue>\n');
  process.exit(2);
}
