/**
 * The alerting edge of one process, assembled from configuration: the outbound guard,
 * the webhook sender bound to it, and the runner that evaluates and sends. The server,
 * the test app and the benchmarks build it the same way.
 */
import type { Engine } from '../../actors/engine.ts';
import type { AlertService } from '../../actors/services/alert-service.ts';
import type { Config } from '../config.ts';
import type { LogLine } from '../logging/log-line.ts';
import { AlertRunner, type AlertRunnerObserver, type AlertRunnerOptions, type WebhookSend } from './alert-runner.ts';
import { systemResolver, type GuardOptions, type Resolver } from './webhook-guard.ts';
import { SENDER_DEFAULTS, sendWebhook } from './webhook-sender.ts';

export interface AlertEdge {
  runner: AlertRunner;
  guard: GuardOptions;
}

export interface AlertEdgeOptions {
  engine: Engine;
  alerts: AlertService;
  config: Pick<Config, 'alertEvalMs' | 'alertWebhookAllowPrivate' | 'publicUrl'>;
  observer: AlertRunnerObserver;
  log: LogLine;
  /** whether this node evaluates and sends for a connection; default every connection (a single node) */
  writes?: (connectionId: string) => boolean;
  /** tests: a resolver that answers without DNS */
  resolve?: Resolver;
  /** tests: a sender in place of HTTP */
  send?: WebhookSend;
  /** tests and benchmarks: the send pool and how long a test waits for its turn */
  runnerLimits?: Pick<AlertRunnerOptions, 'sendsInFlightMax' | 'testTurnWaitMs'>;
}

export function createAlertEdge(options: AlertEdgeOptions): AlertEdge {
  const guard: GuardOptions = { allowPrivate: options.config.alertWebhookAllowPrivate, resolve: options.resolve ?? systemResolver };
  const send: WebhookSend = options.send ?? ((url, body, headers) => sendWebhook(url, body, headers, { ...guard, ...SENDER_DEFAULTS }));
  const runner = new AlertRunner({
    engine: options.engine,
    alerts: options.alerts,
    send,
    evalIntervalMs: options.config.alertEvalMs,
    publicUrl: options.config.publicUrl,
    writes: options.writes ?? (() => true),
    observer: options.observer,
    log: options.log,
    ...options.runnerLimits,
  });
  return { runner, guard };
}
