/**
 * Can jobwatch-bullmq keep up with a busy BullMQ app? Pushes jobs through real BullMQ
 * (a producer adding at a fixed rate, worker processes running them) on a local
 * redis-server, with the agent delivering to a real jobwatch, and prints per rate:
 *
 *   - the agent's lag: how far (ms of Redis's clock) its checkpoint, which moves once events
 *     are delivered to jobwatch or spooled, is behind the newest entry of the queue's event
 *     stream, sampled every 200 ms (p50, p95, max) and the time to catch up after the
 *     producer stops; and the lag of its reader alone (what decides whether BullMQ trims
 *     entries before the agent read them); both from the agent's status file;
 *   - the agent's CPU per 1,000 stream entries (user + system from /proc/<pid>/stat);
 *   - the same for the baseline measured in the same run: a bare XREAD loop over the same
 *     stream (load/bullmq-app.mjs xread), the least any reader of BullMQ's events costs;
 *   - jobs jobwatch shows completed against jobs added, and any stream gap the agent had
 *     to reconcile (BullMQ keeps ~10,000 entries per stream by default).
 *
 * Then a replay: with the agent stopped, --replay jobs' worth of BullMQ-shaped entries
 * (added, waiting, active, completed, and each job's hash) are written straight into a
 * stream, and the agent is started from a checkpoint before them: how many entries per
 * second it reads and delivers when it has only to catch up, against the bare XREAD
 * reader draining the same stream. This is the agent's capacity without the producer and
 * workers competing for the cores (5,000 jobs/s of BullMQ is about 15,000 to 20,000
 * entries/s).
 *
 *   bun load/bullmq-agent.ts [--rates=1000,5000] [--seconds=10] [--workers=2] [--concurrency=100] [--replay=20000] [--profile-agent=DIR]
 *   (--profile-agent writes the agent's V8 CPU profile into DIR)
 */
import { RedisClient } from 'bun';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpuMsOfPid, makeTempDir, removeTempDir, REPO_ROOT, startService, trackChild } from './service.ts';
import { fmtMs, machineDescription, note, num, parseArgs, percentiles, sleep, str, table } from './util.ts';

const args = parseArgs();
const rates = str(args, 'rates', '5000').split(',').map(Number);
const seconds = num(args, 'seconds', 10);
const workerProcesses = num(args, 'workers', 2);
const concurrency = num(args, 'concurrency', 100);
const NODE = Bun.which('node') ?? 'node';
const AGENT = join(REPO_ROOT, 'agents', 'bullmq', 'bin', 'jobwatch-bullmq.js');
if (!existsSync(join(REPO_ROOT, 'agents', 'bullmq', 'node_modules', 'bullmq'))) throw new Error('run `npm run install:agents` first');

interface Child {
  proc: ReturnType<typeof Bun.spawn>;
  text: () => string;
}

function spawn(command: string[], env: Record<string, string> = {}): Child {
  const proc = Bun.spawn(command, { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
  trackChild(proc);
  let text = '';
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      text += decoder.decode(chunk, { stream: true });
      if (text.length > 4_000_000) text = text.slice(-2_000_000);
    }
  };
  void pump(proc.stdout as ReadableStream<Uint8Array>);
  void pump(proc.stderr as ReadableStream<Uint8Array>);
  return { proc, text: () => text };
}

async function waitForText(child: Child, pattern: RegExp, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(child.text())) {
    if (Date.now() > deadline) throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${child.text().slice(-2000)}`);
    await sleep(50);
  }
}

const msOf = (id: string | null | undefined) => (id ? Number(id.slice(0, id.indexOf('-'))) : 0);

const dir = makeTempDir('jobwatch-bullmq-bench-');
const port = 20_000 + Math.floor(Math.random() * 20_000);
const redisServer = spawn(['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no']);
await waitForText(redisServer, /Ready to accept connections/, 15_000);
const redisUrl = `redis://127.0.0.1:${port}`;
const redis = new RedisClient(redisUrl);
const service = await startService({ env: { DAILY_EVENT_LIMIT: '0' }, label: 'bullmq-bench' });
const spoolDir = join(dir, 'spool');
const queues = rates.map((rate) => `bench-${rate}`);
note(`redis ${redisUrl}, jobwatch ${service.baseUrl}; ${workerProcesses} worker processes x concurrency ${concurrency} per queue`);
const workers = Array.from({ length: workerProcesses }, () =>
  spawn([NODE, join(REPO_ROOT, 'test', 'agents', 'bullmq', 'fixtures', 'worker.mjs')], { REDIS_URL: redisUrl, QUEUES: queues.join(','), CONCURRENCY: String(concurrency) }),
);
for (const worker of workers) await waitForText(worker, /^ready/m, 30_000);
const profileDir = str(args, 'profile-agent', '');
const agent = spawn([NODE, ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), AGENT, '--redis', redisUrl, '--url', service.baseUrl, '--api-key', service.apiKey, '--spool-dir', spoolDir, '--discover-interval', '1']);
await waitForText(agent, /jobwatch-bullmq starting/, 15_000);

/** The agent's status file (rewritten every 250 ms): per queue where its reader is and what is delivered or spooled. */
const checkpointOf = (queue: string, part: 'delivered' | 'read' = 'delivered'): string | null => {
  try {
    return JSON.parse(readFileSync(join(spoolDir, 'status-bull.json'), 'utf8')).queues[queue]?.[part] ?? null;
  } catch {
    return null;
  }
};
const tailOf = async (queue: string): Promise<string | null> => {
  const reply = (await redis.send('XREVRANGE', [`bull:${queue}:events`, '+', '-', 'COUNT', '1'])) as Array<[string, unknown]> | null;
  return reply && reply.length > 0 ? reply[0]![0] : null;
};
const entriesAdded = async (queue: string): Promise<number> => {
  try {
    const info = (await redis.send('XINFO', ['STREAM', `bull:${queue}:events`])) as unknown;
    if (Array.isArray(info)) return Number(info[info.indexOf('entries-added') + 1] ?? 0);
    return Number((info as Record<string, unknown>)['entries-added'] ?? 0);
  } catch {
    return 0;
  }
};

const rows: string[][] = [];
for (const [index, rate] of rates.entries()) {
  const queue = queues[index]!;
  // the queue exists before the phase: the agent follows its stream from the start
  await redis.send('XADD', [`bull:${queue}:events`, '*', 'event', 'bench-start']);
  const started = Date.now();
  while (checkpointOf(queue) === null && Date.now() - started < 15_000) await sleep(100);
  const baseline = spawn([NODE, join(REPO_ROOT, 'load', 'bullmq-app.mjs'), 'xread', queue], { REDIS_URL: redisUrl });
  await waitForText(baseline, /^ready/m, 30_000); // its start-up is not counted
  const agentCpu0 = cpuMsOfPid(agent.proc.pid) ?? 0;
  const baselineCpu0 = cpuMsOfPid(baseline.proc.pid) ?? 0;
  const entries0 = await entriesAdded(queue);
  const gaps0 = (agent.text().match(/were trimmed/g) ?? []).length;
  note(`${queue}: producing ${rate} jobs/s for ${seconds} s`);
  const producer = spawn([NODE, join(REPO_ROOT, 'load', 'bullmq-app.mjs'), 'produce', queue, String(rate), String(seconds)], { REDIS_URL: redisUrl });
  const agentLag: number[] = [];
  const readerLag: number[] = [];
  const baselineLag: number[] = [];
  while (producer.proc.exitCode === null) {
    const tail = msOf(await tailOf(queue));
    agentLag.push(Math.max(0, tail - msOf(checkpointOf(queue))));
    readerLag.push(Math.max(0, tail - msOf(checkpointOf(queue, 'read'))));
    const positions = baseline.text().match(/^\d+-\d+$/gm);
    if (positions) baselineLag.push(Math.max(0, tail - msOf(positions[positions.length - 1])));
    await sleep(200);
  }
  const produced = JSON.parse(producer.text().trim().split('\n').pop()!) as { added: number; seconds: number };
  // drain: the workers finish, then the agent catches up with the last entry
  const drainStart = Date.now();
  let caughtUpMs: number | null = null;
  let lastTail = '';
  let stableSince = Date.now();
  while (Date.now() - drainStart < 120_000) {
    const tail = (await tailOf(queue)) ?? '';
    if (tail !== lastTail) {
      lastTail = tail;
      stableSince = Date.now();
    }
    if (checkpointOf(queue) === tail && Date.now() - stableSince > 1000) {
      caughtUpMs = Date.now() - drainStart - 1000;
      break;
    }
    await sleep(100);
  }
  const entries = (await entriesAdded(queue)) - entries0;
  const agentCpu = (cpuMsOfPid(agent.proc.pid) ?? 0) - agentCpu0;
  const baselineCpu = (cpuMsOfPid(baseline.proc.pid) ?? baselineCpu0) - baselineCpu0;
  baseline.proc.kill('SIGTERM');
  await baseline.proc.exited;
  const completed = await fetch(`${service.baseUrl}/api/jobs?framework=bullmq&queue=${queue}&state=completed&limit=1`, { headers: { cookie: service.cookie } }).then((r) => r.json() as Promise<any>);
  const gaps = (agent.text().match(/were trimmed/g) ?? []).length - gaps0;
  const [p50, p95] = percentiles(Float64Array.from(agentLag), [50, 95]);
  const [b50, b95] = percentiles(Float64Array.from(baselineLag), [50, 95]);
  const [r50, r95] = percentiles(Float64Array.from(readerLag), [50, 95]);
  const perThousand = (cpu: number) => (entries > 0 ? cpu / (entries / 1000) : NaN);
  rows.push([
    `${rate}`,
    (produced.added / produced.seconds).toFixed(0),
    String(entries),
    `${fmtMs(p50)} / ${fmtMs(p95)} / ${fmtMs(Math.max(0, ...agentLag))}`,
    caughtUpMs === null ? 'no (120 s)' : fmtMs(caughtUpMs),
    `${fmtMs(r50)} / ${fmtMs(r95)}`,
    `${fmtMs(b50)} / ${fmtMs(b95)}`,
    perThousand(agentCpu).toFixed(1),
    perThousand(baselineCpu).toFixed(1),
    (perThousand(agentCpu) / perThousand(baselineCpu)).toFixed(1),
    `${completed.pagination?.total ?? '?'} / ${produced.added}`,
    String(gaps),
  ]);
}

agent.proc.kill('SIGTERM');
await agent.proc.exited;
const stats = agent.text().match(/stats: .*/g)?.pop() ?? '';

// Replay: the agent catching up on a stream written while it was stopped.
const replayJobs = num(args, 'replay', 20_000);
let replayRow: string[] | null = null;
if (replayJobs > 0) {
  const queue = 'replay';
  const key = `bull:${queue}:events`;
  note(`replay: writing ${replayJobs} jobs' entries with the agent stopped`);
  const nowMs = Date.now();
  for (let start = 0; start < replayJobs; start += 500) {
    const writes: Promise<unknown>[] = [];
    for (let id = start + 1; id <= Math.min(replayJobs, start + 500); id++) {
      writes.push(redis.send('HSET', [`bull:${queue}:${id}`, 'name', 'replayed', 'timestamp', String(nowMs), 'opts', '{"attempts":3}', 'atm', '1', 'ats', '1', 'processedOn', String(nowMs), 'finishedOn', String(nowMs)]));
      writes.push(redis.send('XADD', [key, '*', 'event', 'added', 'jobId', String(id), 'name', 'replayed']));
      writes.push(redis.send('XADD', [key, '*', 'event', 'waiting', 'jobId', String(id)]));
      writes.push(redis.send('XADD', [key, '*', 'event', 'active', 'jobId', String(id), 'prev', 'waiting']));
      writes.push(redis.send('XADD', [key, '*', 'event', 'completed', 'jobId', String(id), 'returnvalue', '{}', 'prev', 'active']));
    }
    await Promise.all(writes);
  }
  const tail = (await tailOf(queue))!;
  const entries = await entriesAdded(queue);
  const checkpointPath = join(spoolDir, 'checkpoints-bull.json');
  const stored = JSON.parse(readFileSync(checkpointPath, 'utf8'));
  stored.queues[queue] = '0-0';
  await Bun.write(checkpointPath, JSON.stringify(stored));
  const replayAgent = spawn([NODE, AGENT, '--redis', redisUrl, '--url', service.baseUrl, '--api-key', service.apiKey, '--spool-dir', spoolDir, '--discover-interval', '1']);
  await waitForText(replayAgent, /queue replay: resuming its event stream after 0-0/, 60_000);
  const cpu0 = cpuMsOfPid(replayAgent.proc.pid) ?? 0;
  const started = performance.now();
  let readMs: number | null = null;
  let deliveredMs: number | null = null;
  while (performance.now() - started < 300_000 && deliveredMs === null) {
    if (readMs === null && checkpointOf(queue, 'read') === tail) readMs = performance.now() - started;
    if (checkpointOf(queue) === tail) deliveredMs = performance.now() - started;
    await sleep(50);
  }
  readMs ??= deliveredMs;
  const agentCpu = (cpuMsOfPid(replayAgent.proc.pid) ?? 0) - cpu0;
  replayAgent.proc.kill('SIGTERM');
  await replayAgent.proc.exited;
  const baseline = spawn([NODE, join(REPO_ROOT, 'load', 'bullmq-app.mjs'), 'xread', queue, '0-0'], { REDIS_URL: redisUrl });
  await waitForText(baseline, /^ready/m, 30_000);
  const bcpu0 = cpuMsOfPid(baseline.proc.pid) ?? 0;
  const bstarted = performance.now();
  while (!baseline.text().includes(`${tail}\n`) && performance.now() - bstarted < 120_000) await sleep(20);
  const baselineMs = performance.now() - bstarted;
  const baselineCpu = (cpuMsOfPid(baseline.proc.pid) ?? 0) - bcpu0;
  baseline.proc.kill('SIGTERM');
  await baseline.proc.exited;
  const perS = (ms: number | null) => (ms ? ((entries / ms) * 1000).toFixed(0) : 'n/a');
  replayRow = [
    String(entries),
    perS(readMs),
    perS(deliveredMs),
    perS(baselineMs),
    (agentCpu / (entries / 1000)).toFixed(1),
    (baselineCpu / (entries / 1000)).toFixed(1),
    (agentCpu / baselineCpu).toFixed(1),
  ];
}
for (const worker of workers) worker.proc.kill('SIGTERM');
await Promise.all(workers.map((worker) => worker.proc.exited));
redis.close();
redisServer.proc.kill('SIGTERM');
await service.cleanup();
removeTempDir(dir);

console.log(`jobwatch-bullmq under load (${machineDescription()}, node ${Bun.spawnSync([NODE, '--version']).stdout.toString().trim()})`);
console.log(`${seconds} s per rate; ${workerProcesses} BullMQ worker processes, concurrency ${concurrency}; removeOnComplete; stream maxLen 10,000 (BullMQ's default)\n`);
console.log(
  table(
    ['target jobs/s', 'added jobs/s', 'stream entries', 'delivered lag p50/p95/max', 'catch-up', 'read lag p50/p95', 'baseline lag p50/p95', 'agent CPU ms/1k', 'baseline CPU ms/1k', 'ratio', 'completed in jobwatch / added', 'gaps'],
    rows,
  ),
);
console.log(`\nagent's last stats line: ${stats}`);
if (replayRow) {
  console.log(`\nreplay: the agent started from a checkpoint before ${replayJobs} jobs' entries written while it was stopped\n`);
  console.log(table(['stream entries', 'agent read entries/s', 'agent delivered entries/s', 'baseline read entries/s', 'agent CPU ms/1k', 'baseline CPU ms/1k', 'ratio'], [replayRow]));
}
