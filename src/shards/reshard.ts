/**
 * The data directory as one engine, whatever its layout (persistence/data-layout.ts), and a
 * change of layout when WORKERS changed between restarts: everything is loaded into one
 * engine from the old stores, the new stores are written as snapshots of it (the accounts',
 * and each shard's part, or one store with everything), and then put in force at once;
 * nothing is lost, and a crash at any point leaves one complete layout in force
 * (test/shards/reshard.test.ts kills it at every step).
 *
 * Loading a sharded directory: the accounts' store first (its records create every
 * connection the accounts know), then each shard's store (its snapshot replaces those
 * connections' state, its log is replayed on top), then the connections are reconciled with
 * the accounts, which drops what a shard kept of a connection deleted since. A shard's
 * retention records name its partition, so replaying them touches only its connections.
 */
import type { Clock } from '../../actors/clock.ts';
import type { ConnectionLimits } from '../../actors/connection/connection-actor.ts';
import type { EngineSnapshot } from '../../actors/engine-snapshot.ts';
import { Engine } from '../../actors/engine.ts';
import { ACCOUNTS_MARK, lostAccountsProblem } from '../accounts-kept.ts';
import { engineRecoveryHandler } from '../engine-recovery.ts';
import { join } from 'node:path';
import { commitLayout, layoutStores, nextLayoutDir, readLayout, removeStaleStores, LAYOUT_BEFORE_SHARDS, WHOLE_STORE_DIR, type DataLayout } from '../../persistence/data-layout.ts';
import { openDurableStore, RecoveryRefusedError, type DurableStore, type FsyncPolicy, type LogWriterObserver, type RecoveryReport } from '../../persistence/durable-store.ts';
import type { Storage } from '../../persistence/storage.ts';
import type { LogLine } from '../logging/log-line.ts';

export interface DataDirAccess {
  dataDir: string;
  storage: Storage;
  fsync: FsyncPolicy;
  clock: Clock;
  limits: ConnectionLimits;
  log: LogLine;
  observer?: LogWriterObserver;
}

export interface WholeDataDir {
  /** every connection of every store */
  engine: Engine;
  /** where the engine's commits go: the one store, or the accounts' (the command line commits only accounts records) */
  store: DurableStore;
  layout: DataLayout;
  /** records replayed and snapshots read, over all stores */
  recovery: { snapshotSeq: number; recordsReplayed: number; truncatedBytes: number; durationMs: number };
  close(): Promise<void>;
}

/** Opens every store of the layout in force into one engine. */
export async function openWholeDataDir(access: DataDirAccess): Promise<WholeDataDir> {
  const startedAtMs = performance.now();
  const layout = await readLayout(access.storage, access.dataDir);
  const stores = layoutStores(access.dataDir, layout);
  const open = (dir: string) => openDurableStore({ dir, storage: access.storage, fsync: access.fsync, log: access.log, observer: access.observer });
  const first = await open(stores.kind === 'whole' ? stores.store : stores.accounts);
  // every audit entry of every store is kept through a move; the stores' bounds apply when the service opens them
  const engine = new Engine({ clock: access.clock, log: first, limits: access.limits, audit: { retentionMs: Number.MAX_SAFE_INTEGER, entriesMax: Number.MAX_SAFE_INTEGER } });
  const recovered = { snapshotSeq: 0, recordsReplayed: 0, truncatedBytes: 0, durationMs: 0 };
  /** A store's snapshot and log into the engine, shapes checked as a start checks them; a shard's snapshot holds no accounts. */
  const recover = async (store: DurableStore, wholeState: boolean): Promise<RecoveryReport> => {
    const report = await store.recover(engineRecoveryHandler(engine, { wholeState }));
    recovered.snapshotSeq += report.snapshotSeq;
    recovered.recordsReplayed += report.recordsReplayed;
    recovered.truncatedBytes += report.truncatedBytes;
    return report;
  };
  try {
    const firstReport = await recover(first, true);
    // the accounts' store keeps the mark that the directory held accounts, as one store does
    const lost = lostAccountsProblem(engine, firstReport.marks ?? []);
    if (lost !== null) throw new RecoveryRefusedError(`refusing to open data directory ${access.dataDir}: ${lost}; restore it from a backup`);
    if (stores.kind === 'sharded') {
      const restorer = engine.restorer();
      restorer.reconcileWithAccounts({ drop: false });
      for (const dir of stores.shards) {
        const shard = await open(dir);
        try {
          await recover(shard, false);
        } finally {
          await shard.close();
        }
      }
      restorer.reconcileWithAccounts();
    }
  } catch (error) {
    await first.close().catch(() => undefined);
    throw error;
  }
  recovered.durationMs = performance.now() - startedAtMs;
  return { engine, store: first, layout, recovery: recovered, close: () => first.close() };
}

const describeLayout = (layout: DataLayout): string => (layout.dir === null ? 'one store (log)' : `${layout.workers} shards (${layout.dir})`);

/**
 * Makes the layout in force the one for `workers` shards, moving the data when it is not;
 * removes what an interrupted change left behind. Returns the layout in force.
 */
export async function settleLayout(access: DataDirAccess, workers: number): Promise<DataLayout> {
  const { storage, dataDir, log } = access;
  const inForce = await readLayout(storage, dataDir);
  const cleared = await removeStaleStores(storage, dataDir, inForce);
  if (cleared.length > 0) log(`removed the stores of a layout no longer in force: ${cleared.join(', ')}`, { cleared });
  if (inForce.workers === workers) return inForce;
  if (inForce.dir === null && (await holdsNothing(storage, join(dataDir, WHOLE_STORE_DIR)))) {
    // a new data directory: nothing to move
    const target: DataLayout = { workers, dir: await nextLayoutDir(storage, dataDir) };
    await commitLayout(storage, dataDir, target);
    log(`a new data directory for ${describeLayout(target)}`, { shards: workers });
    return target;
  }
  return reshard(access, inForce, workers);
}

async function holdsNothing(storage: Storage, dir: string): Promise<boolean> {
  return !(await storage.exists(dir)) || (await storage.list(dir)).length === 0;
}

async function reshard(access: DataDirAccess, from: DataLayout, workers: number): Promise<DataLayout> {
  const { storage, dataDir, log } = access;
  const startedAtMs = performance.now();
  const target: DataLayout = workers === 1 ? LAYOUT_BEFORE_SHARDS : { workers, dir: await nextLayoutDir(storage, dataDir) };
  log(`WORKERS is ${workers} and the data directory holds ${describeLayout(from)}: moving it into ${describeLayout(target)}`, { from: from.workers, to: workers });
  const whole = await openWholeDataDir(access);
  let jobs = 0;
  for (const id of whole.engine.connectionIds()) jobs += whole.engine.connection(id)!.jobs.size;
  const connections = [...whole.engine.connectionIds()].length;
  try {
    const stores = layoutStores(dataDir, target);
    const heldAccounts = whole.engine.accounts.users.size > 0;
    if (stores.kind === 'whole') {
      await writeStore(access, stores.store, whole.engine.takeSnapshot(), heldAccounts);
    } else {
      await writeStore(access, stores.accounts, whole.engine.takeSnapshot({ accounts: true, connections: 'none' }), heldAccounts);
      for (const [index, dir] of stores.shards.entries()) {
        await writeStore(access, dir, whole.engine.takeSnapshot({ accounts: false, connections: { partition: index, partitions: workers } }), false);
      }
    }
  } finally {
    await whole.close();
  }
  await commitLayout(storage, dataDir, target);
  const cleared = await removeStaleStores(storage, dataDir, target);
  log(
    `moved ${connections} connections and ${jobs} jobs from ${describeLayout(from)} into ${describeLayout(target)} in ${Math.round(performance.now() - startedAtMs)} ms; ` +
      `removed the old stores (${cleared.join(', ') || 'none'})`,
    { connections, jobs, from: from.workers, to: workers, durationMs: Math.round(performance.now() - startedAtMs) },
  );
  return target;
}

/** A new store holding only a snapshot of `snapshot`'s state; `heldAccounts`: its manifest marked so, as the old one was. */
async function writeStore(access: DataDirAccess, dir: string, snapshot: EngineSnapshot, heldAccounts: boolean): Promise<void> {
  const store = await openDurableStore({ dir, storage: access.storage, fsync: 'always', log: () => undefined });
  try {
    await store.recover({
      snapshotChunk: () => {
        throw new Error(`${dir} is not empty: a new layout's store is written where nothing is`);
      },
      record: () => {
        throw new Error(`${dir} is not empty: a new layout's store is written where nothing is`);
      },
    });
    await store.writeSnapshot(snapshot);
    if (heldAccounts) await store.mark!(ACCOUNTS_MARK);
  } finally {
    snapshot.release();
    await store.close();
  }
}
