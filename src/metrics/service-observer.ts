/**
 * What the service reports as it works, for metrics. The engine and persistence never
 * import the metrics library: the log writer reports through its own small observer
 * (persistence/log-writer.ts), the edge (routes, src/server.ts) through this one. With
 * metrics off (METRICS_TOKEN unset) the service gets NOT_OBSERVED and measures nothing.
 */
import type { DeliveryOutcome } from '../../actors/alerts/alert-model.ts';
import type { SubscriberCloseReason } from '../../actors/stream/subscriber.ts';
import type { LogWriterObserver, RecoveryReport } from '../../persistence/durable-store.ts';
import type { MemoryReturned } from '../service/memory-return.ts';

export interface IngestCounts {
  accepted: number;
  rejected: number;
  skipped: number;
  truncated: number;
}

export interface ServiceObserver extends LogWriterObserver {
  /** An ingest request answered 200; `startedAtMs` is its `performance.now()` on arrival. */
  ingestAnswered(startedAtMs: number, counts: IngestCounts): void;
  /** An ingest request refused as a whole (401, 413, 429...); `events` were in its body, 0 when unread. */
  ingestRefused(startedAtMs: number, error: unknown, events: number): void;
  /** A login refused: a wrong email or password, or the failed-login limiter. */
  loginRefused(error: unknown): void;
  snapshotWritten(bytes: number, durationMs: number): void;
  recovered(report: RecoveryReport): void;
  streamEnded(reason: SubscriberCloseReason): void;
  /** One evaluation tick looked at `rules` alert rules, of which `transitions` fired or resolved. */
  alertsEvaluated(rules: number, transitions: number): void;
  /** One webhook attempt ended: delivered, to be retried, or given up. */
  alertDeliveryAttempted(outcome: DeliveryOutcome): void;
  /** A full collection after a burst (src/service/memory-return.ts): its stop and the resident memory it gave back. */
  memoryReturned(returned: MemoryReturned): void;
}

const ignore = (): void => {};

export const NOT_OBSERVED: ServiceObserver = {
  batchWritten: ignore,
  synced: ignore,
  ingestAnswered: ignore,
  ingestRefused: ignore,
  loginRefused: ignore,
  snapshotWritten: ignore,
  recovered: ignore,
  streamEnded: ignore,
  alertsEvaluated: ignore,
  alertDeliveryAttempted: ignore,
  memoryReturned: ignore,
};
