/**
 * The service's Prometheus metrics (prom-client), in a registry of their own. Counters
 * and histograms move as the service reports through ServiceObserver; what is retained
 * (jobs, workers, queues, open streams) is counted when scraped, never per event.
 * Labels are bounded: an outcome or an error code, never a user or job; the task metrics'
 * families alone name a connection and a task, at most METRICS_PROMETHEUS_TASKS_MAX pairs.
 * Process memory, CPU and event-loop delay are prom-client's default metrics
 * (`process_*`, `nodejs_*`; the delay from perf_hooks' monitorEventLoopDelay, which Bun has).
 */
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { DomainError } from '../../actors/domain-error.ts';
import type { DeliveryOutcome } from '../../actors/alerts/alert-model.ts';
import type { SubscriberCloseReason } from '../../actors/stream/subscriber.ts';
import type { RecoveryReport } from '../../persistence/durable-store.ts';
import { BufferedHistogram } from './buffered-histogram.ts';
import type { TaskMetrics } from '../../actors/metrics/task-metrics.ts';
import { registerTaskMetricFamilies, type TaskMetricsSource } from './task-metric-families.ts';
import type { IngestCounts, ServiceObserver } from './service-observer.ts';
import type { MemoryReturned } from '../service/memory-return.ts';

/** A connection's stores, as far as counting them goes. */
export interface RetainedConnection {
  jobs: { size: number };
  workers: { size: number };
  queues: { size: number };
  /** with its task metrics, exported per task (task-metric-families.ts) */
  connectionId?: string;
  taskMetrics?: TaskMetrics;
}

/** What the scrape-time gauges read. */
export interface RetainedSources {
  connections(): Iterable<RetainedConnection>;
  openStreams(): number;
  logBytesSinceSnapshot(): number;
  /** alert rules firing now, over every connection */
  alertsFiring?(): number;
  /** cluster mode: log records this node's replica applied since it started (recovery, following, take-ups) */
  replicaRecordsApplied?(): number;
}

const SECONDS_FAST = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
const SECONDS_REQUEST = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const SECONDS_SNAPSHOT = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const EVENT_OUTCOMES = ['accepted', 'rejected', 'skipped', 'truncated'] as const;
const RECORDS_PER_COMMIT = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];

export class ServiceMetrics implements ServiceObserver {
  readonly registry = new Registry();
  /** Events counted since the last scrape, by outcome. */
  private readonly pendingEvents: IngestCounts = { accepted: 0, rejected: 0, skipped: 0, truncated: 0 };
  private readonly ingestRefusals: Counter<'code'>;
  private readonly ingestDuration: BufferedHistogram;
  private readonly logAppendDuration: BufferedHistogram;
  private readonly logFsyncDuration: BufferedHistogram;
  private readonly groupCommitRecords: BufferedHistogram;
  private readonly logBytesWritten: Counter;
  private readonly snapshotDuration: Histogram;
  private readonly snapshotBytes: Gauge;
  private readonly recoveryDuration: Gauge;
  private readonly recoveryRecords: Gauge;
  private readonly streamsEnded: Counter<'reason'>;
  private readonly slowClientsDropped: Counter;
  private readonly loginFailures: Counter;
  private readonly loginLimiterRefusals: Counter;
  private readonly alertRuleEvaluations: Counter;
  private readonly alertTransitions: Counter;
  private readonly alertDeliveries: Counter<'outcome'>;
  private readonly memoryReturns: Counter;
  private readonly memoryReturnSeconds: Counter;
  private readonly memoryReturnedBytes: Counter;
  private readonly taskSeriesMax: number;

  /**
   * `processMetrics: false` for a shard's thread: the process's memory, CPU and event loop
   * are the front's to report (a worker thread shares the process), and shards' figures are
   * summed with the front's at scrape time (`scrapeWith`). `taskSeriesMax`: the (connection,
   * task) pairs the task metrics' families export at most.
   */
  constructor({ processMetrics = true, taskSeriesMax = 100 }: { processMetrics?: boolean; taskSeriesMax?: number } = {}) {
    this.taskSeriesMax = taskSeriesMax;
    const registers = [this.registry];
    if (processMetrics) collectDefaultMetrics({ register: this.registry });
    this.registerIngestEvents(registers);
    this.ingestRefusals = new Counter({
      name: 'jobwatch_ingest_requests_refused_total',
      help: 'Ingest requests refused as a whole, by error code',
      labelNames: ['code'] as const,
      registers,
    });
    this.ingestDuration = new BufferedHistogram({
      name: 'jobwatch_ingest_request_duration_seconds',
      help: 'Ingest requests from arrival to the answer (durable), answered or refused',
      buckets: SECONDS_REQUEST,
      registers,
    });
    this.logAppendDuration = new BufferedHistogram({
      name: 'jobwatch_log_append_duration_seconds',
      help: 'write() of one group commit to the log segment; in cluster mode its JetStream publish until the quorum acked',
      buckets: SECONDS_FAST,
      registers,
    });
    this.logFsyncDuration = new BufferedHistogram({
      name: 'jobwatch_log_fsync_duration_seconds',
      help: 'fdatasync of the log segment',
      buckets: SECONDS_FAST,
      registers,
    });
    this.groupCommitRecords = new BufferedHistogram({
      name: 'jobwatch_log_group_commit_records',
      help: 'Records written (and synced under FSYNC=always) together in one group commit',
      buckets: RECORDS_PER_COMMIT,
      registers,
    });
    this.logBytesWritten = new Counter({ name: 'jobwatch_log_written_bytes_total', help: 'Bytes written to the log', registers });
    this.snapshotDuration = new Histogram({
      name: 'jobwatch_snapshot_duration_seconds',
      help: 'Snapshots written, from start to the covered log files removed',
      buckets: SECONDS_SNAPSHOT,
      registers,
    });
    this.snapshotBytes = new Gauge({ name: 'jobwatch_snapshot_bytes', help: 'Size of the newest snapshot written by this process', registers });
    this.recoveryDuration = new Gauge({ name: 'jobwatch_recovery_duration_seconds', help: 'How long recovery took at this start', registers });
    this.recoveryRecords = new Gauge({ name: 'jobwatch_recovery_records_replayed', help: 'Log records replayed after the snapshot at this start', registers });
    this.streamsEnded = new Counter({
      name: 'jobwatch_sse_streams_ended_total',
      help: 'Live streams ended, by reason (too-slow: a slow client cut off; cancelled/aborted: the client went away; hub-closed: the service closed it; session-ended: its session ended)',
      labelNames: ['reason'] as const,
      registers,
    });
    this.slowClientsDropped = new Counter({
      name: 'jobwatch_sse_slow_clients_dropped_total',
      help: 'Live streams cut off because the client fell more than the byte budget behind',
      registers,
    });
    this.loginFailures = new Counter({ name: 'jobwatch_login_failures_total', help: 'Logins refused for a wrong email or password', registers });
    this.loginLimiterRefusals = new Counter({
      name: 'jobwatch_login_limiter_refusals_total',
      help: 'Logins refused by the failed-login limiter (429) before the password was checked',
      registers,
    });
    this.alertRuleEvaluations = new Counter({ name: 'jobwatch_alert_rule_evaluations_total', help: 'Alert rules evaluated (one per rule per evaluation tick)', registers });
    this.alertTransitions = new Counter({ name: 'jobwatch_alert_transitions_total', help: 'Alert rules that began firing or resolved', registers });
    this.alertDeliveries = new Counter({
      name: 'jobwatch_alert_deliveries_total',
      help: 'Webhook delivery attempts by outcome: delivered, retrying (failed, tried again later), failed (given up)',
      labelNames: ['outcome'] as const,
      registers,
    });
    this.memoryReturns = new Counter({
      name: 'jobwatch_memory_returns_total',
      help: 'Full garbage collections run after a burst of ingest or replication once the node was quiet (MEMORY_RETURN_IDLE_MS)',
      registers,
    });
    this.memoryReturnSeconds = new Counter({ name: 'jobwatch_memory_return_seconds_total', help: 'Time the thread stood still in those collections', registers });
    this.memoryReturnedBytes = new Counter({
      name: 'jobwatch_memory_returned_bytes_total',
      help: 'Resident memory those collections gave back to the system (resident before minus after)',
      registers,
    });
  }

  /** The ingest events' counter, counted as plain numbers per request (a labelled inc costs ~0.2 us, four per request) and handed over at scrape time. */
  private registerIngestEvents(registers: Registry[]): void {
    const pending = this.pendingEvents;
    new Counter({
      name: 'jobwatch_ingest_events_total',
      help: 'Events in ingest requests by outcome: accepted, rejected (invalid or over a tenant limit), skipped (duplicates), truncated (past the daily limit)',
      labelNames: ['outcome'] as const,
      registers,
      collect() {
        for (const outcome of EVENT_OUTCOMES) {
          this.labels(outcome).inc(pending[outcome]);
          pending[outcome] = 0;
        }
      },
    });
  }

  /** Registers the gauges counted at scrape time; call once the engine is open. */
  watch(sources: RetainedSources): void {
    const registers = [this.registry];
    const retained = (name: string, help: string, count: (connection: RetainedConnection) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          let total = 0;
          for (const connection of sources.connections()) total += count(connection);
          this.set(total);
        },
      });
    retained('jobwatch_connections', 'Connections', () => 1);
    registerTaskMetricFamilies(this.registry, () => taskMetricsOf(sources.connections()), this.taskSeriesMax);
    retained('jobwatch_jobs_retained', 'Jobs kept in memory, over every connection', (connection) => connection.jobs.size);
    retained('jobwatch_workers_retained', 'Workers kept, over every connection', (connection) => connection.workers.size);
    retained('jobwatch_queues_retained', 'Queues kept, over every connection', (connection) => connection.queues.size);
    new Gauge({
      name: 'jobwatch_sse_subscribers',
      help: 'Open live streams (Server-Sent Events)',
      registers,
      collect() {
        this.set(sources.openStreams());
      },
    });
    const alertsFiring = sources.alertsFiring;
    if (alertsFiring !== undefined) {
      new Gauge({
        name: 'jobwatch_alerts_firing',
        help: 'Alert rules firing now, over every connection',
        registers,
        collect() {
          this.set(alertsFiring());
        },
      });
    }
    const replicaRecordsApplied = sources.replicaRecordsApplied;
    if (replicaRecordsApplied !== undefined) {
      new Counter({
        name: 'jobwatch_replica_records_applied_total',
        help: 'Cluster mode: log records this node applied to its replica since it started, of the partitions it keeps (at recovery, following the log, taking partitions up)',
        registers,
        collect() {
          this.reset();
          this.inc(replicaRecordsApplied());
        },
      });
    }
    new Gauge({
      name: 'jobwatch_log_bytes_since_snapshot',
      help: 'Log bytes a restart would replay; a snapshot is taken past SNAPSHOT_LOG_MB',
      registers,
      collect() {
        this.set(sources.logBytesSinceSnapshot());
      },
    });
  }

  /** The text exposition format and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** The families as data, for a front to add up with its own (a shard's answer to the front's scrape). */
  async families(): Promise<MetricObjectWithValues<MetricValue<string>>[]> {
    return this.registry.getMetricsAsJSON();
  }

  /** This registry's families added to those of the shards (counters, histograms and gauges summed). */
  async scrapeWith(shards: Array<MetricObjectWithValues<MetricValue<string>>[]>): Promise<{ contentType: string; body: string }> {
    const merged = AggregatorRegistry.aggregate([await this.families(), ...shards]);
    return { contentType: this.registry.contentType, body: await merged.metrics() };
  }

  ingestAnswered(startedAtMs: number, counts: IngestCounts): void {
    this.ingestDuration.observe((performance.now() - startedAtMs) / 1000);
    const pending = this.pendingEvents;
    pending.accepted += counts.accepted;
    pending.rejected += counts.rejected;
    pending.skipped += counts.skipped;
    pending.truncated += counts.truncated;
  }

  ingestRefused(startedAtMs: number, error: unknown, events: number): void {
    this.ingestDuration.observe((performance.now() - startedAtMs) / 1000);
    const code = error instanceof DomainError ? error.code : 'INTERNAL_ERROR';
    this.ingestRefusals.labels(code).inc();
    // a request refused for the daily limit truncates every event it carried
    if (code === 'DAILY_LIMIT_EXCEEDED') this.pendingEvents.truncated += events;
  }

  loginRefused(error: unknown): void {
    if (!(error instanceof DomainError)) return;
    if (error.code === 'UNAUTHORIZED') this.loginFailures.inc();
    if (error.code === 'RATE_LIMITED') this.loginLimiterRefusals.inc();
  }

  batchWritten(records: number, bytes: number, writeMs: number): void {
    this.logAppendDuration.observe(writeMs / 1000);
    this.groupCommitRecords.observe(records);
    this.logBytesWritten.inc(bytes);
  }

  synced(syncMs: number): void {
    this.logFsyncDuration.observe(syncMs / 1000);
  }

  snapshotWritten(bytes: number, durationMs: number): void {
    this.snapshotDuration.observe(durationMs / 1000);
    this.snapshotBytes.set(bytes);
  }

  recovered(report: RecoveryReport): void {
    this.recoveryDuration.set(report.durationMs / 1000);
    this.recoveryRecords.set(report.recordsReplayed);
  }

  alertsEvaluated(rules: number, transitions: number): void {
    this.alertRuleEvaluations.inc(rules);
    this.alertTransitions.inc(transitions);
  }

  alertDeliveryAttempted(outcome: DeliveryOutcome): void {
    this.alertDeliveries.labels(outcome).inc();
  }

  memoryReturned(returned: MemoryReturned): void {
    this.memoryReturns.inc();
    this.memoryReturnSeconds.inc(returned.durationMs / 1000);
    this.memoryReturnedBytes.inc(Math.max(0, returned.residentBeforeBytes - returned.residentAfterBytes));
  }

  streamEnded(reason: SubscriberCloseReason): void {
    this.streamsEnded.labels(reason).inc();
    if (reason === 'too-slow') this.slowClientsDropped.inc();
  }
}

function* taskMetricsOf(connections: Iterable<RetainedConnection>): Generator<TaskMetricsSource> {
  for (const { connectionId, taskMetrics } of connections) if (connectionId !== undefined && taskMetrics !== undefined) yield { connectionId, taskMetrics };
}
