/**
 * The front's shards as a whole: it makes their links, replicates every accounts record the
 * front commits to each of them (in the order of its log: `replicating` wraps that log),
 * feeds the front's stream hubs from their live events (`liveFeed`), and starts and stops
 * them together. Built before the front's engine, which needs the replicating log, and
 * connected once that engine and its hubs exist.
 */
import type { Engine, EngineRecord, RecordLog } from '../../actors/engine.ts';
import type { LiveUpdates, RemoteLiveFeed } from '../../actors/live/live-updates.ts';
import type { LogLine } from '../logging/log-line.ts';
import { ShardLink, type ShardChannel } from './shard-link.ts';
import { shardOf } from './shard-runtime.ts';
import type { ShardHealth } from './shard-states.ts';
import type { ShardRecoverySummary, StoreMark } from './shard-protocol.ts';
import type { RecoveryReport } from '../../persistence/durable-store.ts';

export interface ShardSetParts {
  engine: Engine;
  live: LiveUpdates;
  spawn: (index: number) => ShardChannel;
  log: LogLine;
  restartDelayMs?: number;
}

const RESTART_DELAY_MS = 500;

export class ShardSet {
  private linksNow: ShardLink[] = [];
  /** what each shard's latest recovery did */
  private readonly recoveries = new Map<number, ShardRecoverySummary>();

  constructor(readonly count: number) {}

  get links(): readonly ShardLink[] {
    return this.linksNow;
  }

  /**
   * The front's log, sending each record to every shard as it is appended (as the front
   * applies it, before it is durable); the append resolves once it is durable and every
   * shard applied it, so whatever follows its acknowledgement finds it on any shard.
   */
  replicating(log: RecordLog): RecordLog {
    return {
      append: async (record) => {
        // the front's audit entries stay the front's: a read of the log merges the front's and the shards'
        if ((record as EngineRecord).t === 'audit.recorded') return log.append(record);
        const applied = this.linksNow.map((link) => link.replicate(record as EngineRecord));
        const seq = await log.append(record);
        await Promise.all(applied);
        return seq;
      },
    };
  }

  /** What the front's LiveUpdates drives the shards' feeds with. */
  readonly liveFeed: RemoteLiveFeed = {
    watch: async (connectionIds) => {
      const byShard = new Map<number, string[]>();
      for (const id of connectionIds) {
        const shard = shardOf(id, this.count);
        byShard.set(shard, [...(byShard.get(shard) ?? []), id]);
      }
      await Promise.all([...byShard].map(([shard, ids]) => this.linksNow[shard]?.watch(ids)));
    },
    unwatch: (connectionId, graceUntilMs) => this.linksNow[shardOf(connectionId, this.count)]?.unwatch(connectionId, graceUntilMs),
    announceOfflineWorkers: () => {
      for (const link of this.linksNow) link.announceOfflineWorkers();
    },
  };

  connect(parts: ShardSetParts): void {
    const { engine, live, log } = parts;
    this.linksNow = Array.from(
      { length: this.count },
      (_, index) =>
        new ShardLink({
          index,
          spawn: () => parts.spawn(index),
          accountsNow: () => [...engine.takeSnapshot({ accounts: true, connections: 'none' }).chunks].filter((chunk) => chunk.k !== 'audit'),
          restartDelayMs: parts.restartDelayMs ?? RESTART_DELAY_MS,
          events: {
            ready: (shard, recovery) => {
              this.recoveries.set(shard, recovery);
              log(
                `shard ${shard} of ${this.count} ready: ${recovery.connections} connections, snapshot seq ${recovery.snapshotSeq}, ` +
                  `${recovery.recordsReplayed} records replayed${recovery.truncatedBytes > 0 ? `, ${recovery.truncatedBytes} torn bytes cut` : ''} in ${Math.round(recovery.durationMs)} ms`,
                { shard, ...recovery, durationMs: Math.round(recovery.durationMs) },
              );
            },
            // what the shard had not sent when it ended is gone: a resume from before it resets
            down: (_shard, _why, watched) => {
              for (const id of watched) live.skipped(id);
            },
            live: (events) => {
              for (const [connectionId, event, data] of events) live.publish(connectionId, event, data);
            },
            skipped: (connectionId) => live.skipped(connectionId),
            log: (line, fields) => log(line, fields),
          },
        }),
    );
  }

  /**
   * The recovery of the whole service: the accounts' and every shard's added up (snapshot
   * sequences too: each store counts its own records, so their sum is the records the
   * snapshots cover, as one store's sequence is), in `durationMs`.
   */
  recoveryTotal(accounts: RecoveryReport, durationMs: number): RecoveryReport {
    const shards = [...this.recoveries.values()];
    return {
      snapshotSeq: shards.reduce((sum, shard) => sum + shard.snapshotSeq, accounts.snapshotSeq),
      recordsReplayed: shards.reduce((sum, shard) => sum + shard.recordsReplayed, accounts.recordsReplayed),
      truncatedBytes: shards.reduce((sum, shard) => sum + shard.truncatedBytes, accounts.truncatedBytes),
      durationMs: accounts.durationMs + durationMs,
      lines: accounts.lines,
    };
  }

  /** Every shard's state, for /api/health. */
  health(): Promise<ShardHealth[]> {
    return Promise.all(this.linksNow.map((link) => link.health()));
  }

  /** Starts every shard; resolves once all recovered. */
  async start(): Promise<void> {
    await Promise.all(this.linksNow.map((link) => link.start()));
  }

  /** Each shard snapshots, syncs and closes its log, then ends; where each store stands then. */
  async stop(): Promise<Array<StoreMark | null>> {
    return Promise.all(this.linksNow.map((link) => link.stop()));
  }

  /** Each shard snapshots its store if its log grew; where each stands then. */
  async snapshot(): Promise<StoreMark[]> {
    return (await Promise.all(this.linksNow.map((link) => link.call({ what: 'snapshot' })))) as StoreMark[];
  }
}
