/**
 * Live-stream delivery delay: N dashboard subscribers on GET /api/events/stream while
 * ingest runs at a target event rate; for every ingest request, the delay from sending it
 * to its probe job arriving at each subscriber.
 *
 *   npx bun load/stream.ts --subscribers 1000 --rate 50000 --duration 10
 *   npx bun load/stream.ts --layout single --rate 50000      # every stream on one connection
 *
 * The service allows a user only so many open streams (429 past it; 20 when this was
 * written), and a connection is seen only by the user who owns it. The script finds the
 * limit by opening streams until the 429, then lays the subscribers out:
 * - spread (default): ceil(N / limit) users (the admin creates them with POST /api/users),
 *   each with its own connection and `limit` streams; ingest goes round-robin to the
 *   connections at the total target rate, so each stream gets 1/users of the events.
 * - single: `limit` streams of the admin on one connection that receives the whole rate
 *   (the largest fan-out of one connection the service allows).
 *
 * How the delay is measured: every pre-built body (events.ts) has one probe job whose
 * externalId is `probe-<tag>-<sequence>-<send time in microseconds>`, written into the
 * body (with the target connectionId) just before the request is sent. The subscribers run
 * in a child process (its own event loop; BUN_CONFIG_MAX_HTTP_REQUESTS raised so fetch may
 * hold more than 256 streams); each reads its stream with fetch + a reader, finds probe ids
 * in the raw bytes (no JSON parsing of the flood) and takes arrival time minus the embedded
 * send time. Both processes read the same wall clock (performance.timeOrigin + now()).
 * Ingest is paced: one request every batch/rate seconds, at most 16 in flight; requests
 * that could not be sent on time are counted, and the achieved rate is printed.
 *
 * When the route answers 404 (not built yet) the scenario is skipped with a message.
 * Options: --subscribers (default 1000), --rate events/s (default 50000), --batch (default
 * 1000), --duration seconds (default 10), --layout spread|single, --fsync (default always),
 * --profile (CPU profile of the service; --inclusive for total time, --top n).
 */
import type { Subprocess } from 'bun';
import { buildTemplates, CONNECTION_PLACEHOLDER, nextSequence, stamp } from './events.ts';
import { newestProfile, summarizeProfile } from './profile.ts';
import { createConnection, login, makeTempDir, removeTempDir, REPO_ROOT, serviceFromEnv, trackChild, type Session } from './service.ts';
import { flag, fmtBytes, fmtCount, fmtMs, note, num, parseArgs, percentiles, sleep, str, table, wallUs } from './util.ts';

export const STREAM_PATH = '/api/events/stream';

export type StreamLayout = 'spread' | 'single';

export interface StreamOptions {
  subscribers: number;
  rate: number;
  batch: number;
  durationS: number;
  layout: StreamLayout;
}

export interface StreamResult {
  skipped: string | null;
  layout: StreamLayout;
  subscribersWanted: number;
  subscribersOpened: number;
  /** streams one user may hold open (found by opening until 429), null when no limit was met */
  perUserLimit: number | null;
  users: number;
  openFailures: Record<string, number>;
  targetRate: number;
  achievedRate: number;
  requestsSent: number;
  requestsLate: number;
  ingestErrors: number;
  probesExpected: number;
  probesReceived: number;
  p50: number;
  p99: number;
  max: number;
  bytesReceived: number;
  streamsEnded: number;
  endReasons: Record<string, number>;
  /** ingest request latency during the run (send to response), the part of the delay spent before publishing */
  ingestP50: number;
  ingestP99: number;
}

interface ChildPlanEntry {
  cookie: string;
  count: number;
}

interface ChildReport {
  openedPerUser: number[];
  failures: Record<string, number>;
  probes: number;
  p50: number | null;
  p99: number | null;
  max: number | null;
  bytes: number;
  ended: number;
  endReasons: Record<string, number>;
}

function emptyResult(options: StreamOptions, skipped: string | null): StreamResult {
  return {
    skipped,
    layout: options.layout,
    subscribersWanted: options.subscribers,
    subscribersOpened: 0,
    perUserLimit: null,
    users: 0,
    openFailures: {},
    targetRate: options.rate,
    achievedRate: 0,
    requestsSent: 0,
    requestsLate: 0,
    ingestErrors: 0,
    probesExpected: 0,
    probesReceived: 0,
    p50: Number.NaN,
    p99: Number.NaN,
    max: Number.NaN,
    bytesReceived: 0,
    streamsEnded: 0,
    endReasons: {},
    ingestP50: Number.NaN,
    ingestP99: Number.NaN,
  };
}

/** Reads `PREFIX {json}` lines from the child's stdout. */
class ChildLines {
  private buffered = '';
  private readonly lines: string[] = [];
  private wake: (() => void) | null = null;
  private ended = false;

  constructor(stream: ReadableStream<Uint8Array>) {
    void (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of stream) {
        this.buffered += decoder.decode(chunk, { stream: true });
        let newline: number;
        while ((newline = this.buffered.indexOf('\n')) >= 0) {
          this.lines.push(this.buffered.slice(0, newline));
          this.buffered = this.buffered.slice(newline + 1);
        }
        this.wake?.();
      }
      this.ended = true;
      this.wake?.();
    })();
  }

  async next(prefix: string, timeoutMs: number): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.lines.findIndex((line) => line.startsWith(prefix));
      if (index >= 0) return this.lines.splice(index, 1)[0]!.slice(prefix.length);
      if (this.ended) throw new Error(`stream subscribers exited before '${prefix.trim()}'`);
      if (Date.now() > deadline) throw new Error(`stream subscribers: no '${prefix.trim()}' within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 200);
      });
    }
  }
}

async function openStream(baseUrl: string, cookie: string): Promise<{ status: number; close: () => Promise<void> }> {
  const controller = new AbortController();
  const response = await fetch(`${baseUrl}${STREAM_PATH}`, { headers: { cookie, accept: 'text/event-stream' }, signal: controller.signal });
  return {
    status: response.status,
    close: async () => {
      controller.abort();
      await response.body?.cancel().catch(() => undefined);
    },
  };
}

/** Opens streams as one user until the service refuses (429) or `upTo` are open; closes them again. */
async function perUserStreamLimit(session: Session, upTo: number): Promise<number | null> {
  const open: Array<() => Promise<void>> = [];
  let limit: number | null = null;
  try {
    for (let i = 0; i < upTo; i++) {
      const stream = await openStream(session.baseUrl, session.cookie);
      if (stream.status === 429) {
        await stream.close();
        limit = i;
        break;
      }
      open.push(stream.close);
      if (stream.status !== 200) throw new Error(`GET ${STREAM_PATH} answered HTTP ${stream.status}`);
    }
  } finally {
    await Promise.all(open.map((close) => close()));
  }
  await sleep(300); // the server forgets closed streams when it sees the disconnect
  return limit;
}

interface Tenant {
  cookie: string;
  apiKey: string;
  connectionId: string;
  streams: number;
}

async function createTenant(admin: Session, email: string, password: string): Promise<Omit<Tenant, 'streams'>> {
  const created = await fetch(`${admin.baseUrl}/api/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: admin.cookie },
    body: JSON.stringify({ email, password }),
  });
  if (!created.ok) throw new Error(`creating user ${email}: HTTP ${created.status}: ${(await created.text()).slice(0, 300)}`);
  await created.arrayBuffer();
  const cookie = await login(admin.baseUrl, email, password);
  const connection = await createConnection(admin.baseUrl, cookie, `stream-${email}`);
  return { cookie, ...connection };
}

export async function measureStream(admin: Session, options: StreamOptions): Promise<StreamResult> {
  const { subscribers, rate, batch, durationS, layout } = options;
  const first = await openStream(admin.baseUrl, admin.cookie);
  await first.close();
  if (first.status === 404) return emptyResult(options, `GET ${STREAM_PATH} answered 404: the live stream route does not exist yet, so the stream scenario was skipped`);
  if (first.status !== 200) return emptyResult(options, `GET ${STREAM_PATH} answered HTTP ${first.status}; the stream scenario was skipped`);
  await sleep(300);

  // at most 200: this process's fetch holds at most 256 connections at once (BUN_CONFIG_MAX_HTTP_REQUESTS)
  const limit = await perUserStreamLimit(admin, Math.min(subscribers + 1, 200));
  const perUser = limit ?? subscribers;
  const tag = Math.random().toString(36).slice(2, 8);
  const tenants: Tenant[] = [];
  if (layout === 'single') {
    tenants.push({ ...admin, streams: Math.min(subscribers, perUser) });
  } else {
    const users = Math.ceil(subscribers / Math.max(1, perUser));
    if (users > 1) note(`stream: ${subscribers} subscribers over ${users} users (${perUser} streams per user allowed), each with its own connection`);
    for (let u = 0; u < users; u++) {
      const streams = Math.min(perUser, subscribers - u * perUser);
      tenants.push(u === 0 ? { ...admin, streams } : { ...(await createTenant(admin, `stream-${tag}-${u}@example.com`, `stream-password-${tag}-${u}`)), streams });
    }
  }

  const templates = buildTemplates({ connectionId: CONNECTION_PLACEHOLDER, eventsPerBatch: batch, count: 24, seed: 99, probeTag: tag });
  const plan: ChildPlanEntry[] = tenants.map((t) => ({ cookie: t.cookie, count: t.streams }));
  const totalStreams = plan.reduce((sum, p) => sum + p.count, 0);
  const child: Subprocess<'pipe', 'pipe', 'inherit'> = Bun.spawn([process.execPath, 'load/stream.ts', '--child', '--tag', tag], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      STREAM_BASE_URL: admin.baseUrl,
      STREAM_PLAN: JSON.stringify(plan),
      BUN_CONFIG_MAX_HTTP_REQUESTS: String(Math.min(65_535, totalStreams + 64)),
    },
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'inherit',
  });
  trackChild(child);
  const lines = new ChildLines(child.stdout);
  try {
    const ready = JSON.parse(await lines.next('READY ', 120_000)) as { openedPerUser: number[]; failures: Record<string, number> };
    const opened = ready.openedPerUser.reduce((a, b) => a + b, 0);
    note(`stream: ${opened} of ${totalStreams} subscribers connected${Object.keys(ready.failures).length > 0 ? `, failures ${JSON.stringify(ready.failures)}` : ''}`);

    // paced ingest, round-robin over the tenants' connections
    const intervalMs = (1000 * batch) / rate;
    const maxInFlight = 16;
    let inFlight = 0;
    let sent = 0;
    let late = 0;
    let errors = 0;
    let acceptedEvents = 0;
    let expected = 0;
    let firstError: string | null = null;
    const ingestLatencies: number[] = [];
    const started = performance.now();
    const endAt = started + durationS * 1000;
    let nextAt = started;
    let turn = 0;
    while (performance.now() < endAt) {
      const now = performance.now();
      if (now < nextAt) {
        await sleep(Math.max(0, Math.min(nextAt - now, 50)));
        continue;
      }
      nextAt += intervalMs;
      if (inFlight >= maxInFlight) {
        late++;
        continue;
      }
      const tenantIndex = turn % tenants.length;
      const tenant = tenants[tenantIndex]!;
      const template = templates[Math.floor(turn / tenants.length) % templates.length]!;
      turn++;
      // a copy: the template is patched again for later requests while this one may still be sending
      const body = Buffer.from(stamp(template, nextSequence(), wallUs(), tenant.connectionId));
      inFlight++;
      sent++;
      const sentAt = performance.now();
      fetch(`${admin.baseUrl}/api/ingest`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.apiKey}` },
        body,
      })
        .then(async (response) => {
          const text = await response.text();
          ingestLatencies.push(performance.now() - sentAt);
          if (!response.ok) {
            errors++;
            firstError ??= `HTTP ${response.status}: ${text.slice(0, 300)}`;
          } else {
            acceptedEvents += (JSON.parse(text) as { accepted: number }).accepted;
            expected += ready.openedPerUser[tenantIndex] ?? 0;
          }
        })
        .catch((error) => {
          errors++;
          firstError ??= String(error);
        })
        .finally(() => inFlight--);
    }
    while (inFlight > 0) await sleep(5);
    const elapsedS = (performance.now() - started) / 1000;
    if (firstError !== null) note(`stream: ${errors} ingest errors, first: ${firstError}`);
    await sleep(1_000); // let the last flushes arrive
    child.stdin.write('stop\n');
    child.stdin.flush();
    const report = JSON.parse(await lines.next('RESULT ', 60_000)) as ChildReport;
    const [ingestP50, ingestP99] = percentiles(ingestLatencies, [50, 99]);
    return {
      ...emptyResult(options, null),
      subscribersOpened: opened,
      perUserLimit: limit,
      users: tenants.length,
      openFailures: report.failures,
      achievedRate: acceptedEvents / elapsedS,
      requestsSent: sent,
      requestsLate: late,
      ingestErrors: errors,
      probesExpected: expected,
      probesReceived: report.probes,
      p50: report.p50 ?? Number.NaN,
      p99: report.p99 ?? Number.NaN,
      max: report.max ?? Number.NaN,
      bytesReceived: report.bytes,
      streamsEnded: report.ended,
      endReasons: report.endReasons,
      ingestP50: ingestP50!,
      ingestP99: ingestP99!,
    };
  } finally {
    child.kill('SIGTERM');
    await child.exited;
  }
}

export function streamShape(result: StreamResult): string {
  if (result.layout === 'single') return `${result.subscribersOpened} streams on 1 connection`;
  return `${result.subscribersOpened} streams = ${result.users} users x ${result.perUserLimit ?? result.subscribersWanted}, 1 connection each`;
}

export function describeStream(result: StreamResult): string {
  if (result.skipped !== null) return `stream: skipped: ${result.skipped}`;
  const rows = [
    ['layout', `${result.layout}: ${streamShape(result)}; per-user stream limit ${result.perUserLimit ?? 'not reached'}`],
    ['subscribers connected', `${result.subscribersOpened} of ${result.subscribersWanted}${Object.keys(result.openFailures).length > 0 ? ` (failures ${JSON.stringify(result.openFailures)})` : ''}`],
    ['ingest rate (target / achieved)', `${fmtCount(result.targetRate)} / ${fmtCount(result.achievedRate)} events/s (${result.requestsSent} requests, ${result.requestsLate} not sent on time, ${result.ingestErrors} errors)`],
    ['probes received / expected', `${fmtCount(result.probesReceived)} / ${fmtCount(result.probesExpected)}`],
    ['delivery delay p50 / p99 / max', `${fmtMs(result.p50)} / ${fmtMs(result.p99)} / ${fmtMs(result.max)}`],
    ['ingest request latency p50 / p99', `${fmtMs(result.ingestP50)} / ${fmtMs(result.ingestP99)} (events are published only after their batch is durable)`],
    ['bytes received by all subscribers', fmtBytes(result.bytesReceived)],
    ['streams ended early', `${result.streamsEnded}${result.streamsEnded > 0 ? ` ${JSON.stringify(result.endReasons)}` : ''}`],
  ];
  return table(['stream', 'value'], rows);
}

// ---------------------------------------------------------------------------------------
// The subscriber child process

async function runSubscribers(tag: string): Promise<void> {
  const baseUrl = process.env.STREAM_BASE_URL!;
  const plan = JSON.parse(process.env.STREAM_PLAN!) as ChildPlanEntry[];
  const needle = Buffer.from(`probe-${tag}-`);
  const failures: Record<string, number> = {};
  const endReasons: Record<string, number> = {};
  let delays = new Float64Array(1 << 16);
  let probes = 0;
  let bytes = 0;
  let ended = 0;
  let stopping = false;
  const controllers: AbortController[] = [];
  const record = (delayMs: number): void => {
    if (probes === delays.length) {
      const bigger = new Float64Array(delays.length * 2);
      bigger.set(delays);
      delays = bigger;
    }
    delays[probes++] = delayMs;
  };
  const open = async (cookie: string): Promise<ReadableStream<Uint8Array> | null> => {
    const controller = new AbortController();
    controllers.push(controller);
    try {
      const response = await fetch(`${baseUrl}${STREAM_PATH}`, { headers: { cookie, accept: 'text/event-stream' }, signal: controller.signal });
      if (response.status !== 200 || response.body === null) {
        failures[`HTTP ${response.status}`] = (failures[`HTTP ${response.status}`] ?? 0) + 1;
        await response.body?.cancel().catch(() => undefined);
        return null;
      }
      return response.body;
    } catch (error) {
      const key = String(error).slice(0, 80);
      failures[key] = (failures[key] ?? 0) + 1;
      return null;
    }
  };
  const consume = async (body: ReadableStream<Uint8Array>): Promise<void> => {
    const reader = body.getReader();
    // a probe id split across two chunks is found by keeping the tail of the previous chunk
    let carry: Buffer = Buffer.alloc(0);
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          if (!stopping) {
            ended++;
            endReasons['ended by server'] = (endReasons['ended by server'] ?? 0) + 1;
          }
          return;
        }
        const arrivedUs = wallUs();
        bytes += value.byteLength;
        const chunk = carry.length === 0 ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : Buffer.concat([carry, value]);
        let at = chunk.indexOf(needle);
        let consumedTo = 0;
        while (at >= 0) {
          const stampEnd = at + needle.length + 8 + 1 + 16;
          if (stampEnd > chunk.length) break;
          const sendUs = Number(chunk.toString('latin1', at + needle.length + 9, stampEnd));
          if (Number.isFinite(sendUs)) record((arrivedUs - sendUs) / 1000);
          consumedTo = stampEnd;
          at = chunk.indexOf(needle, stampEnd);
        }
        const keepFrom = Math.max(consumedTo, chunk.length - (needle.length + 26));
        carry = Buffer.from(chunk.subarray(keepFrom));
      }
    } catch (error) {
      if (!stopping) {
        ended++;
        const key = String(error).slice(0, 80);
        endReasons[key] = (endReasons[key] ?? 0) + 1;
      }
    }
  };
  const openedPerUser = plan.map(() => 0);
  const readers: Promise<void>[] = [];
  // open in waves of at most 100 so the server is not hit by every handshake at once
  const wanted = plan.flatMap((entry, user) => Array.from({ length: entry.count }, () => ({ cookie: entry.cookie, user })));
  for (let i = 0; i < wanted.length; i += 100) {
    const wave = wanted.slice(i, i + 100);
    const bodies = await Promise.all(wave.map((w) => open(w.cookie)));
    bodies.forEach((body, k) => {
      if (body === null) return;
      openedPerUser[wave[k]!.user]!++;
      readers.push(consume(body));
    });
  }
  console.log(`READY ${JSON.stringify({ openedPerUser, failures })}`);
  const decoder = new TextDecoder();
  let input = '';
  for await (const chunk of Bun.stdin.stream()) {
    input += decoder.decode(chunk);
    if (input.includes('stop')) break;
  }
  stopping = true;
  for (const controller of controllers) controller.abort();
  const [p50, p99, max] = percentiles(delays.subarray(0, probes), [50, 99, 100]);
  const report: ChildReport = { openedPerUser, failures, probes, p50: p50 ?? null, p99: p99 ?? null, max: max ?? null, bytes, ended, endReasons };
  console.log(`RESULT ${JSON.stringify(report)}`);
  process.exit(0);
}

if (import.meta.main) {
  const args = parseArgs();
  if (args.child === true) {
    await runSubscribers(str(args, 'tag', 'x'));
  } else {
    const profileDir = flag(args, 'profile') ? makeTempDir('jobwatch-prof-') : undefined;
    const service = await serviceFromEnv({ env: { FSYNC: str(args, 'fsync', 'always'), DAILY_EVENT_LIMIT: '0' }, label: 'service', cpuProfDir: profileDir });
    try {
      const result = await measureStream(service, {
        subscribers: num(args, 'subscribers', 1000),
        rate: num(args, 'rate', 50_000),
        batch: num(args, 'batch', 1000),
        durationS: num(args, 'duration', 10),
        layout: str(args, 'layout', 'spread') === 'single' ? 'single' : 'spread',
      });
      console.log(describeStream(result));
    } finally {
      await service.cleanup();
    }
    if (profileDir !== undefined) {
      const profile = newestProfile(profileDir);
      console.log(profile === null ? 'no CPU profile was written' : summarizeProfile(profile, num(args, 'top', 30), flag(args, 'inclusive')));
      removeTempDir(profileDir);
    }
  }
}
