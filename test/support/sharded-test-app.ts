/**
 * The test app with its connections on shards (WORKERS above 1): the front (the accounts,
 * the hubs, the router and merges of src/shards/) and that many shards, each behind a
 * MessageChannel in this thread running the same runtime as a worker thread would
 * (src/shards/shard-runtime.ts), with the test's clock and log. Its `app.handle` is the
 * front's, checked against the OpenAPI document like the single app's.
 *
 * What tests read of the engine directly goes through views over front and shards:
 * `engine.connection(id)` is the actor on its shard, `engine.commit` sends an accounts record
 * to the front (which replicates it) and a connection's record to its shard, and
 * `engine.takeSnapshot()` is the combined snapshot a backup writes.
 */
import type { Server } from 'bun';
import { ManualClock } from '../../actors/clock.ts';
import { Engine, inMemoryLog, type EngineRecord } from '../../actors/engine.ts';
import type { EngineSnapshot } from '../../actors/engine-snapshot.ts';
import { LiveUpdates } from '../../actors/live/live-updates.ts';
import { LOGIN_LIMITER_DEFAULTS } from '../../actors/accounts/login-limiter.ts';
import { AccountService } from '../../actors/services/account-service.ts';
import { AlertService } from '../../actors/services/alert-service.ts';
import type { ChannelInput } from '../../actors/alerts/alert-book.ts';
import type { RuleInput } from '../../actors/alerts/alert-model.ts';
import type { Access } from '../../actors/accounts/access.ts';
import { ConnectionService } from '../../actors/services/connection-service.ts';
import { TaskMetricsService } from '../../actors/services/task-metrics-service.ts';
import { TeamService } from '../../actors/services/team-service.ts';
import { UserService } from '../../actors/services/user-service.ts';
import { AuditService } from '../../actors/services/audit-service.ts';
import type { AuditEntry, AuditLog, AuditQuery, StoredAuditEntry } from '../../actors/audit/audit-log.ts';
import { JobActionService } from '../../actors/services/job-action-service.ts';
import { createAlertEdge } from '../../src/alerts/alert-edge.ts';
import { createApp, type App } from '../../src/app.ts';
import { NOT_OBSERVED } from '../../src/metrics/service-observer.ts';
import { combinedSnapshot } from '../../src/shards/combined-snapshot.ts';
import { inProcessChannel } from '../../src/shards/in-process-channel.ts';
import { ShardFront } from '../../src/shards/shard-front.ts';
import { shardApp, shardEngine, shardOf, shardRuntime, type ShardApp } from '../../src/shards/shard-runtime.ts';
import { ShardSet } from '../../src/shards/shard-set.ts';
import { checkAnswersAgainstOpenApi } from './openapi-conformance.ts';
import {
  T0,
  TEST_INVITE_TTL_MS,
  TEST_LIMITS,
  TEST_LIVE,
  TEST_SESSION,
  firstTestAdmin,
  noBackups,
  sessionHelpers,
  testAppConfig,
  testClient,
  testSso,
  type TestAppOptions,
} from './test-app.ts';

interface TestShard extends ShardApp {
  engine: Engine;
}

export async function shardedTestApp(options: TestAppOptions, count: number) {
  const clock = new ManualClock(options.nowMs ?? T0);
  const errors: string[] = [];
  const streamLog: string[] = [];
  const halts: unknown[] = [];
  const limits = { ...TEST_LIMITS, ...options.limits };
  const recordLog = options.log ?? inMemoryLog;
  const config = testAppConfig(options);
  const alertConfig = { alertEvalMs: 10_000, alertWebhookAllowPrivate: options.alerts?.allowPrivate ?? false, publicUrl: options.publicUrl ?? null };
  const loginLimiter = { ...LOGIN_LIMITER_DEFAULTS, ...options.loginLimiter };

  const set = new ShardSet(count);
  const engine = new Engine({ clock, log: set.replicating(recordLog), limits, holds: () => false, onHalt: (error) => halts.push(error) });
  const accounts = new AccountService(engine, TEST_SESSION.ttlMs, TEST_SESSION.secret, loginLimiter);
  const connections = new ConnectionService(engine);
  const teams = new TeamService(engine);
  const users = new UserService(engine, TEST_INVITE_TTL_MS);
  const live = new LiveUpdates(engine, clock, { ...TEST_LIVE, log: (line) => streamLog.push(line), ...options.live, remoteFeed: set.liveFeed });
  const frontAlerts = new AlertService(engine, options.publicUrl ?? null);
  const frontApp = createApp({
    engine,
    accounts,
    connections,
    teams,
    users,
    audit: new AuditService(engine),
    sso: testSso(options, engine),
    jobActions: new JobActionService(engine, connections),
    taskMetrics: new TaskMetricsService(engine, connections),
    live,
    alerts: frontAlerts,
    alertDelivery: createAlertEdge({ engine, alerts: frontAlerts, config: alertConfig, observer: NOT_OBSERVED, log: (line) => errors.push(line) }),
    config,
    logError: (line) => errors.push(line),
    backup: noBackups,
    shards: set,
  });

  const shards: TestShard[] = [];
  set.connect({
    engine,
    live,
    log: (line, fields) => {
      if (fields?.severity === 'error') errors.push(line);
    },
    spawn: (index) =>
      inProcessChannel(async (accountChunks, send) => {
        const built = shardEngine({ index, shards: count, clock, log: recordLog, limits, onHalt: (error) => halts.push(error) }, accountChunks);
        built.restorer.reconcileWithAccounts();
        const parts = shardApp({
          engine: built.engine,
          clock,
          send,
          sessionTtlMs: TEST_SESSION.ttlMs,
          sessionSecret: TEST_SESSION.secret,
          passwordLinkTtlMs: TEST_INVITE_TTL_MS,
          loginLimiter,
          config,
          alerts: { config: alertConfig, resolve: options.alerts?.resolve, send: options.alerts?.send, observer: options.alerts?.observer ?? NOT_OBSERVED, runnerLimits: options.alerts?.runnerLimits },
          live: TEST_LIVE,
          log: (line) => errors.push(line),
          logError: (line) => errors.push(line),
        });
        shards[index] = { engine: built.engine, ...parts };
        const recovery = { snapshotSeq: 0, recordsReplayed: 0, truncatedBytes: 0, durationMs: 0, connections: 0 };
        return shardRuntime(built.engine, parts, recovery, async () => null, TEST_LIVE.livenessCheckIntervalMs);
      }, ''),
  });
  await set.start();

  const front = new ShardFront({ links: set.links, app: frontApp, engine, accounts, connections, config, logError: (line) => errors.push(line) });
  const app = listenable(front, frontApp as unknown as { server: Server<undefined> | null; routes: unknown });
  checkAnswersAgainstOpenApi(app);
  if (options.withAdmin ?? true) await firstTestAdmin(accounts, teams);

  const shardOfConnection = (connectionId: string): TestShard => shards[shardOf(connectionId, count)]!;
  const engineView = shardedEngineView(engine, shards, shardOfConnection);

  function serve(): { baseUrl: string; stop: () => Promise<void> } {
    app.listen({ port: 0, hostname: '127.0.0.1' });
    return { baseUrl: `http://127.0.0.1:${app.server!.port}`, stop: () => app.stop(true) };
  }

  const alerts = {
    evaluate: async (ids: Iterable<string>) => {
      const total = { rules: 0, transitions: 0 };
      for (const id of ids) {
        const done = await shardOfConnection(id).alerts.evaluate([id]);
        total.rules += done.rules;
        total.transitions += done.transitions;
      }
      return total;
    },
    recordAttempt: (connectionId: string, ...rest: Parameters<AlertService['recordAttempt']> extends [string, ...infer R] ? R : never) =>
      shardOfConnection(connectionId).alerts.recordAttempt(connectionId, ...rest),
    createChannel: (access: Access, connectionId: string, input: ChannelInput) => shardOfConnection(connectionId).alerts.createChannel(access, connectionId, input),
    createRule: (access: Access, connectionId: string, input: RuleInput) => shardOfConnection(connectionId).alerts.createRule(access, connectionId, input),
  };
  const alertRunner = {
    // every shard's runner starts its sends at once, as one runner over all connections would
    sendDue: async () => void (await Promise.all(shards.map((shard) => shard.alertDelivery.runner.sendDue()))),
  };

  return {
    app,
    engine: engineView,
    clock,
    serve,
    accounts,
    connections,
    teams,
    users,
    live,
    alerts,
    alertRunner,
    errors,
    streamLog,
    halts,
    shards: set,
    ...testClient(app),
    ...sessionHelpers(engineView, clock),
  };
}

/** The front as tests use the single app: `handle`, and `listen`, `server`, `stop` on a loopback port. */
function listenable(front: ShardFront, frontApp: { server: Server<undefined> | null; routes: unknown }) {
  const app = {
    /** the application's route table: the front's and every shard's are the same */
    routes: frontApp.routes as App['routes'],
    server: null as Server<undefined> | null,
    handle: (request: Request) => front.handle(request, app.server),
    listen(options: { port: number; hostname: string }) {
      app.server = Bun.serve({ ...options, development: false, fetch: (request, server) => front.handle(request, server) });
      // the front's own routes (the live stream) reach the server through their app, as Elysia's listen would give them
      frontApp.server = app.server;
      return app;
    },
    async stop(closeActive = false) {
      await app.server?.stop(closeActive);
    },
  };
  return app;
}

/** What tests read and do of "the engine", over the front and the shards (see the top of this file). */
function shardedEngineView(front: Engine, shards: TestShard[], shardOfConnection: (id: string) => TestShard) {
  const connectionRecord = (record: EngineRecord): string | undefined => ('connectionId' in record && record.t !== 'connection.deleted' ? record.connectionId : undefined);
  return {
    get accounts() {
      return front.accounts;
    },
    get clock() {
      return front.clock;
    },
    get limits() {
      return front.limits;
    },
    /** the front's entries and every shard's, as one log */
    get audit() {
      return combinedAudit([front.audit, ...shards.map((shard) => shard.engine.audit)]);
    },
    get halted() {
      return front.halted || shards.some((shard) => shard.engine.halted);
    },
    connection: (connectionId: string) => shardOfConnection(connectionId).engine.connection(connectionId),
    connectionIds: () => shards.flatMap((shard) => [...shard.engine.connectionIds()])[Symbol.iterator](),
    async commit(record: EngineRecord): Promise<void> {
      const connectionId = connectionRecord(record);
      if (connectionId !== undefined) return shardOfConnection(connectionId).engine.commit(record);
      if (record.t === 'retention') {
        await Promise.all(shards.map((shard) => shard.engine.commit(record)));
        return;
      }
      return front.commit(record);
    },
    evolve(record: EngineRecord) {
      const connectionId = connectionRecord(record);
      if (connectionId !== undefined) return shardOfConnection(connectionId).engine.evolve(record);
      if (record.t === 'retention') {
        for (const shard of shards) shard.engine.evolve(record);
        return null;
      }
      return front.evolve(record);
    },
    takeSnapshot(): EngineSnapshot {
      const accounts = front.takeSnapshot({ accounts: true, connections: 'none', everyAuditEntry: true });
      const parts = shards.map((shard, index) => shard.engine.takeSnapshot({ accounts: false, connections: { partition: index, partitions: shards.length }, everyAuditEntry: true }));
      const combined = combinedSnapshot(accounts, parts.map((part) => part.chunks));
      return {
        chunks: combined.chunks,
        release: () => {
          combined.release();
          for (const part of parts) part.release();
        },
      };
    },
  } as unknown as Engine;
}

/** The audit logs of the front and the shards read as one: each entry once, in one order. */
function combinedAudit(logs: AuditLog[]) {
  const all = (): StoredAuditEntry[] => {
    const seen = new Set<string>();
    return logs
      .flatMap((log) => log.toSnapshot())
      .filter(({ entry }) => !seen.has(entry.id) && seen.add(entry.id) !== undefined)
      .sort((a, b) => a.entry.atMs - b.entry.atMs || (a.entry.id < b.entry.id ? -1 : a.entry.id > b.entry.id ? 1 : 0));
  };
  return {
    get size() {
      return all().length;
    },
    toSnapshot: all,
    query(query: AuditQuery): { entries: AuditEntry[]; more: boolean } {
      const pages = logs.map((log) => log.query(query));
      const seen = new Set<string>();
      const entries = pages
        .flatMap((page) => page.entries)
        .filter((entry) => !seen.has(entry.id) && seen.add(entry.id) !== undefined)
        .sort((a, b) => b.atMs - a.atMs || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
      return { entries: entries.slice(0, query.limit), more: entries.length > query.limit || pages.some((page) => page.more) };
    },
  };
}
