/**
 * Property-based fuzzing of the HTTP API (fast-check): generated ingest batches, list
 * queries, cursors and bulk actions against one application whose log is a real durable
 * store. Every answer must be below 500 and every error in the envelope; at the end the
 * service is "restarted" (store closed, state recovered from snapshot + log into a new
 * engine) and must hold exactly the state it held before.
 *
 * Replay: the seed is printed; `FUZZ_SEED=<seed> npm test -- test/fuzz` runs the same
 * inputs again. `FUZZ_RUNS=<n>` raises the number of runs (default keeps it to seconds).
 * test/routes/robustness.test.ts covers the fixed odd requests over every route.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine, type EngineRecord } from '../../actors/engine.ts';
import { openDurableStore, type DurableStore } from '../../persistence/durable-store.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { dumpEngine } from '../support/engine-dump.ts';
import { testApp, type TestApp } from '../support/test-app.ts';
import { ingestBody, listRequest, oddString } from './generators.ts';

const SEED = process.env.FUZZ_SEED !== undefined && /^-?\d+$/.test(process.env.FUZZ_SEED) ? Number(process.env.FUZZ_SEED) : (Date.now() ^ (Math.random() * 2 ** 31)) | 0;
const RUNS = process.env.FUZZ_RUNS !== undefined && /^\d+$/.test(process.env.FUZZ_RUNS) ? Number(process.env.FUZZ_RUNS) : 300;
/** Small limits so that eviction, dedup forgetting and quotas are reached by a short run. */
const LIMITS = { dailyEventLimit: 4_000, dedupKeysMax: 300, maxJobsPerConnection: 150, retentionMs: 6 * 3_600_000 };
const FUZZ_TIMEOUT_MS = 120_000;

console.log(`fuzz seed ${SEED}, ${RUNS} runs per property (replay: FUZZ_SEED=${SEED}; more runs: FUZZ_RUNS=<n>)`);
const params = { seed: SEED, numRuns: RUNS };

interface World {
  dir: string;
  store: DurableStore;
  t: TestApp;
  cookie: string;
  connections: Array<{ id: string; apiKey: string }>;
  lastCursor: string | null;
  requests: number;
  accepted: number;
  rejected: number;
}
let world: World;

async function openStore(dir: string): Promise<DurableStore> {
  return openDurableStore({ dir, storage: new FileStorage(), fsync: 'no', log: () => undefined });
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-fuzz-'));
  const store = await openStore(dir);
  await store.recover({ snapshotChunk: () => undefined, record: () => undefined });
  const t = await testApp({ log: store, limits: LIMITS });
  const cookie = await t.login();
  const connections = [await t.createConnection(cookie, 'fuzz-a'), await t.createConnection(cookie, 'fuzz-b')];
  world = { dir, store, t, cookie, connections, lastCursor: null, requests: 0, accepted: 0, rejected: 0 };
});

afterAll(async () => {
  await world.store.close().catch(() => undefined);
  rmSync(world.dir, { recursive: true, force: true });
});

/** No 5xx; an error is `{error:{code,message,docs_url}}` with the docs_url of its code. */
function expectWellFormed(what: string, response: { status: number; json: any; text: string }): void {
  world.requests++;
  if (response.status >= 500) throw new Error(`${what} -> ${response.status}: ${response.text.slice(0, 500)}`);
  if (response.status < 400) return;
  const error = response.json?.error;
  const ok =
    typeof error?.code === 'string' && typeof error.message === 'string' && error.message !== '' && error.docs_url === `/docs/errors#${error.code}`;
  if (!ok) throw new Error(`${what} -> ${response.status} outside the envelope: ${response.text.slice(0, 500)}`);
}

describe(`fuzz (seed ${SEED})`, () => {
  test(
    'ingest batches of near-valid events, clock moves, retention and bulk actions: no 5xx, errors in the envelope',
    async () => {
      const { t } = world;
      const nowMs = t.clock.nowMs();
      const [first, second] = world.connections as [{ id: string; apiKey: string }, { id: string; apiKey: string }];
      const step = fc.record({
        // mostly events of the key's own connection; sometimes another's, which must be refused per event
        target: fc.oneof(
          { weight: 6, arbitrary: fc.tuple(fc.constant(first), ingestBody(first.id, nowMs)) },
          { weight: 3, arbitrary: fc.tuple(fc.constant(second), ingestBody(second.id, nowMs)) },
          { weight: 1, arbitrary: fc.tuple(fc.constant(second), ingestBody(first.id, nowMs)) },
        ),
        advanceMs: fc.oneof({ weight: 5, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 2 * 3_600_000 })),
        retention: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
        bulk: fc.option(fc.record({ action: fc.constantFrom('revoke', 'retry'), take: fc.integer({ min: 0, max: 120 }), odd: fc.option(oddString) })),
      });
      await fc.assert(
        fc.asyncProperty(step, async ({ target: [{ id, apiKey }, body], advanceMs, retention, bulk }) => {
          const response = await t.request('POST', '/api/ingest', { rawBody: body, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' } });
          expectWellFormed(`POST /api/ingest ${body.slice(0, 300)}`, response);
          if (response.status === 200) {
            world.accepted += response.json.accepted;
            world.rejected += response.json.rejected;
          }
          if (advanceMs > 0) t.clock.advance(advanceMs);
          if (retention) await t.engine.commit({ t: 'retention', atMs: t.clock.nowMs() });
          if (bulk !== null) {
            const jobs = [...(t.engine.connection(id)?.jobs.values() ?? [])].slice(0, Math.min(bulk.take, 100)).map((job) => job.id);
            const ids = bulk.odd === null || jobs.length >= 100 ? jobs : [...jobs, bulk.odd];
            const answer = await t.request('POST', `/api/jobs/bulk/${bulk.action}`, { body: { ids }, headers: { cookie: world.cookie } });
            expectWellFormed(`POST /api/jobs/bulk/${bulk.action} ${JSON.stringify(ids).slice(0, 200)}`, answer);
          }
        }),
        params,
      );
      expect(t.errors).toEqual([]);
      expect(t.halts).toEqual([]);
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    'list queries with odd parameters and real or damaged cursors: no 5xx, errors in the envelope',
    async () => {
      const { t } = world;
      const cursorDamage = fc.option(fc.tuple(fc.nat(), fc.constantFrom('A', '_', '-', '=', '%', '')));
      await fc.assert(
        fc.asyncProperty(listRequest, fc.boolean(), cursorDamage, async ([path, query], useLastCursor, damage) => {
          let search = query;
          if (path === '/api/jobs' && useLastCursor && world.lastCursor !== null) {
            let cursor = world.lastCursor;
            if (damage !== null) {
              const at = damage[0] % cursor.length;
              cursor = cursor.slice(0, at) + damage[1] + cursor.slice(at + 1);
            }
            search = `${query}${query === '' ? '' : '&'}cursor=${encodeURIComponent(cursor)}`;
          }
          const { apiKey } = world.connections[0]!;
          const response = await t.request('GET', `${path}?${search}`, { headers: { cookie: world.cookie, authorization: `Bearer ${apiKey}` } });
          expectWellFormed(`GET ${path}?${search}`, response);
          if (path === '/api/jobs' && response.status === 200) world.lastCursor = response.json.pagination.nextCursor ?? world.lastCursor;
        }),
        params,
      );
      expect(t.errors).toEqual([]);
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    'after a restart (snapshot + the log after it) the state equals the state before',
    async () => {
      const { t, store } = world;
      await store.writeSnapshot(t.engine.takeSnapshot());
      // more after the snapshot, so recovery replays log records on top of it
      const { apiKey, id } = world.connections[1]!;
      const more = fc.sample(ingestBody(id, t.clock.nowMs()), { seed: SEED, numRuns: 10 });
      for (const body of more) {
        expectWellFormed('POST /api/ingest (after the snapshot)', await t.request('POST', '/api/ingest', { rawBody: body, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' } }));
      }
      const before = dumpEngine(t.engine, t.clock.nowMs());
      await store.close();

      const reopened = await openStore(world.dir);
      world.store = reopened;
      const engine = new Engine({ clock: t.clock, log: reopened, limits: LIMITS });
      const restorer = engine.restorer();
      const report = await reopened.recover({ snapshotChunk: (chunk) => restorer.restore(chunk), record: (record) => engine.evolve(record as EngineRecord) });
      expect(report.snapshotSeq).toBeGreaterThan(0);
      expect(dumpEngine(engine, t.clock.nowMs())).toEqual(before);
      console.log(`fuzz: ${world.requests} requests, ${world.accepted} events accepted and ${world.rejected} rejected, ${report.snapshotSeq} records before the snapshot, ${report.recordsReplayed} replayed after it`);
    },
    FUZZ_TIMEOUT_MS,
  );
});
