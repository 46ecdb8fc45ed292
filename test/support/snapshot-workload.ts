/**
 * A durable engine on a data directory and a varied workload for it: what the snapshot
 * tests restore and compare.
 */
import { ManualClock } from '../../actors/clock.ts';
import { Engine } from '../../actors/engine.ts';
import { AccountService } from '../../actors/services/account-service.ts';
import { ConnectionService } from '../../actors/services/connection-service.ts';
import { JobActionService } from '../../actors/services/job-action-service.ts';
import { ingestEvents } from '../../actors/services/ingest-service.ts';
import { openDurableStore } from '../../persistence/durable-store.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { engineRecoveryHandler } from '../../src/engine-recovery.ts';
import { iso, jobEvent, queueEvent, workerEvent } from './events.ts';
import { T0 } from './test-app.ts';

export const LIMITS = { dailyEventLimit: 50_000, dedupKeysMax: 500, maxJobsPerConnection: 400, retentionMs: 86_400_000 };

export async function openAt(dir: string, clock: ManualClock) {
  const store = await openDurableStore({ dir, storage: new FileStorage(), fsync: 'always', log: () => undefined });
  const engine = new Engine({ clock, log: store, limits: LIMITS });
  // as a start recovers: every chunk and record checked for its shape
  const report = await store.recover(engineRecoveryHandler(engine, { wholeState: true }));
  const accounts = new AccountService(engine, 86_400_000, 'secret-for-tests');
  const connections = new ConnectionService(engine);
  return { store, engine, accounts, connections, actions: new JobActionService(engine, connections), report };
}

/** A varied workload: out-of-order job events, failures with errors and traces, arguments, results, logs and progress objects, workers, queue snapshots, duplicates, actions. */
/** `relations: false`: no job names a parent or root (a state that formats before 10 can hold). */
export async function workload(opened: { engine: Engine }, apiKey: string, connectionId: string, round: number, { relations = true } = {}) {
  const events: unknown[] = [];
  for (let i = 0; i < 300; i++) {
    const externalId = `job-${(i * 7 + round * 13) % 450}`;
    const atMs = T0 - 3_600_000 + ((i * 7919 + round * 104_729) % 3_600_000);
    const state = ['queued', 'active', 'completed', 'failed', 'retrying'][(i + round) % 5]!;
    events.push(
      jobEvent(connectionId, atMs, {
        externalId,
        name: `tasks.t${i % 7}`,
        queue: i % 4 === 0 ? null : `q${i % 3}`,
        state,
        workerId: `w${i % 5}`,
        attempt: 1 + (i % 3),
        startedAt: state === 'queued' ? null : iso(atMs - 500),
        completedAt: state === 'completed' || state === 'failed' ? iso(atMs) : null,
        extensions: i % 10 === 0 ? { eta: iso(atMs + 60_000), tags: { round } } : null,
        // failures share a few errors and traces, as one bug's do; one is not Latin-1
        error: state === 'failed' || state === 'retrying' ? `ValueError: bad input ${i % 3}` : null,
        stacktrace: state === 'failed' ? `Traceback (most recent call last):\n  File "tasks.py", line ${i % 4}\n${i % 8 === 0 ? 'ünïcode ✓' : 'ascii'}` : null,
        // workflows: some jobs name a parent (arrived or not, and one not Latin-1), fewer a root
        parentExternalId: relations && i % 9 === 0 ? (i % 4 === 0 ? `job-${(i * 3 + round) % 450}` : `parent-ü-${i % 5}`) : null,
        rootExternalId: relations && i % 18 === 0 ? `job-${round}` : null,
        // what the job was called with and gave back, its log and progress as an object (the column list's texts)
        args: i % 3 === 0 ? { args: [i, 'x'], kwargs: { invoice_id: `INV-${i}`, password: 'hunter2', name: i % 6 === 0 ? 'Jürgen ✓' : 'plain' } } : null,
        result: state === 'completed' && i % 2 === 0 ? { ok: true, n: i } : null,
        logs: i % 7 === 0 ? [`line ${i} of round ${round}`, 'ünïcode line'] : null,
        progress: state === 'active' && i % 4 === 1 ? { percent: i % 100, stage: 'upload' } : null,
      }),
    );
    if (i % 30 === 0) events.push(workerEvent(connectionId, atMs, { externalId: `w${i % 5}`, state: i % 60 === 0 ? 'online' : 'heartbeat', queues: ['q1'] }));
    if (i % 50 === 0) events.push(queueEvent(connectionId, atMs, { name: `q${i % 3}`, depth: i, extensions: i % 100 === 0 ? { waiting: i, latency: round / 4 } : null }));
  }
  events.push(events[0], events[1]); // duplicates
  for (let start = 0; start < events.length; start += 100) await ingestEvents(opened.engine, apiKey, events.slice(start, start + 100));
}
