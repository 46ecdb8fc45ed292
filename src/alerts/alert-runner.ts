/**
 * Evaluates alert rules every ALERT_EVAL_SECONDS and sends the deliveries that are due.
 * It runs where the connection's records are written (every connection on a single node;
 * in cluster mode the connections of the partitions this node writes), so a cluster
 * evaluates and sends each alert once. Evaluations and outcomes are committed records;
 * this loop keeps nothing a restart would need, only which sends are in flight.
 *
 * A delivery whose outcome was not yet committed when the process died is sent again
 * after the restart: at least once, with the same delivery id (`deliveryId` in the
 * payload) so a receiver can drop the repeat.
 */
import { linkBaseOf, type DeliveryOutcome } from '../../actors/alerts/alert-model.ts';
import type { SendResult } from '../../actors/alerts/alert-book.ts';
import type { Engine } from '../../actors/engine.ts';
import type { AlertService, DueDelivery, PublicDeliveryAttempt } from '../../actors/services/alert-service.ts';
import type { LogLine } from '../logging/log-line.ts';
import { SIGNATURE_HEADER, signatureOf, webhookBody } from './webhook-payload.ts';

export type WebhookSend = (url: string, body: string, headers: Record<string, string>) => Promise<SendResult>;

export interface AlertRunnerObserver {
  alertsEvaluated(rules: number, transitions: number): void;
  alertDeliveryAttempted(outcome: DeliveryOutcome): void;
}

export interface AlertRunnerOptions {
  engine: Engine;
  alerts: AlertService;
  send: WebhookSend;
  evalIntervalMs: number;
  /** the base of dashboard links in payloads (PUBLIC_URL); null: relative links */
  publicUrl: string | null;
  /** whether this node evaluates and sends for a connection */
  writes(connectionId: string): boolean;
  observer: AlertRunnerObserver;
  log: LogLine;
  /** sends in flight at once, over every connection */
  sendsInFlightMax?: number;
}

const SENDS_IN_FLIGHT_MAX = 32;
/** per connection: one tenant's slow or flooded receiver cannot hold every slot */
export const SENDS_IN_FLIGHT_PER_CONNECTION_MAX = 4;

export class AlertRunner {
  private timer: ReturnType<typeof setInterval> | null = null;
  private evaluating: Promise<void> | null = null;
  private readonly inFlight = new Map<string, Promise<PublicDeliveryAttempt | null>>();
  private readonly inFlightPerConnection = new Map<string, number>();

  constructor(private readonly options: AlertRunnerOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.options.evalIntervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for what is running (sends end within their timeout). */
  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.evaluating;
    await Promise.allSettled(this.inFlight.values());
  }

  /** One evaluation, then the sends that are due (not awaited: a slow receiver never delays the next evaluation). */
  async tick(): Promise<void> {
    const { engine, alerts, observer, log } = this.options;
    if (engine.halted || this.evaluating !== null) return;
    const run = async (): Promise<void> => {
      try {
        const { rules, transitions } = await alerts.evaluate(this.writtenConnections());
        observer.alertsEvaluated(rules, transitions);
      } catch (error) {
        log(`alert evaluation failed: ${error instanceof Error ? error.message : String(error)}`, { severity: 'error' });
      }
    };
    this.evaluating = run().finally(() => {
      this.evaluating = null;
    });
    await this.evaluating;
    this.sendDue();
  }

  /** Starts every due send not already in flight, up to the bound. */
  sendDue(): Promise<unknown> {
    const started: Promise<unknown>[] = [];
    for (const due of this.options.alerts.due(this.writtenConnections())) {
      if (this.inFlight.size >= (this.options.sendsInFlightMax ?? SENDS_IN_FLIGHT_MAX)) break;
      if (this.inFlight.has(due.delivery.id)) continue;
      if ((this.inFlightPerConnection.get(due.delivery.connectionId) ?? 0) >= SENDS_IN_FLIGHT_PER_CONNECTION_MAX) continue;
      started.push(this.attempt(due));
    }
    return Promise.all(started);
  }

  /** Sends one pending delivery now (the "send a test" action) and returns its attempt; null when it is gone. */
  deliverNow(connectionId: string, deliveryId: string): Promise<PublicDeliveryAttempt | null> {
    const running = this.inFlight.get(deliveryId);
    if (running !== undefined) return running;
    const due = this.options.alerts.pendingDelivery(connectionId, deliveryId);
    return due === undefined ? Promise.resolve(null) : this.attempt(due);
  }

  private attempt(due: DueDelivery): Promise<PublicDeliveryAttempt | null> {
    const { delivery, channel } = due;
    const attempt = (async () => {
      const body = webhookBody(delivery, channel, linkBaseOf(channel, this.options.publicUrl));
      const headers = {
        [SIGNATURE_HEADER]: signatureOf(channel.secret, body),
        'X-Jobwatch-Delivery': delivery.id,
        'X-Jobwatch-Event': `alert.${delivery.notice.status}`,
      };
      const result = await this.options.send(channel.url, body, headers);
      if (this.options.engine.halted) return null;
      const recorded = await this.options.alerts.recordAttempt(delivery.connectionId, delivery.id, result);
      if (recorded !== null) this.options.observer.alertDeliveryAttempted(recorded.outcome);
      return recorded;
    })();
    const tracked = attempt
      .catch((error: unknown) => {
        this.options.log(`alert delivery ${delivery.id} failed: ${error instanceof Error ? error.message : String(error)}`, { severity: 'error' });
        return null;
      })
      .finally(() => {
        this.inFlight.delete(delivery.id);
        const left = (this.inFlightPerConnection.get(delivery.connectionId) ?? 1) - 1;
        if (left > 0) this.inFlightPerConnection.set(delivery.connectionId, left);
        else this.inFlightPerConnection.delete(delivery.connectionId);
      });
    this.inFlight.set(delivery.id, tracked);
    this.inFlightPerConnection.set(delivery.connectionId, (this.inFlightPerConnection.get(delivery.connectionId) ?? 0) + 1);
    return tracked;
  }

  private writtenConnections(): string[] {
    return [...this.options.engine.connectionIds()].filter((id) => this.options.writes(id));
  }
}
