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
 *
 * Every send, a test notice's too, takes a slot of send-slots.ts's fair queue: a
 * connection whose receiver never answers holds its own slots, never another's.
 */
import { linkBaseOf, type DeliveryOutcome } from '../../actors/alerts/alert-model.ts';
import type { SendResult } from '../../actors/alerts/alert-book.ts';
import type { Engine } from '../../actors/engine.ts';
import type { AlertService, DueDelivery, PublicDeliveryAttempt } from '../../actors/services/alert-service.ts';
import type { LogLine } from '../logging/log-line.ts';
import { SendSlots } from './send-slots.ts';
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
  /** sends in flight at once over every connection, beyond each connection's first (send-slots.ts) */
  sendsInFlightMax?: number;
  /** how long "send a test" waits for its connection's turn before it answers without an attempt */
  testTurnWaitMs?: number;
}

const SENDS_IN_FLIGHT_MAX = 32;
/** per connection: one tenant's slow or flooded receiver cannot hold every slot */
export const SENDS_IN_FLIGHT_PER_CONNECTION_MAX = 4;
/** As long as one send may take: a test behind four sends to a receiver that never answers gets its turn within it. */
export const TEST_TURN_WAIT_MS = 5_000;

/** What "send a test" came to: the first attempt, or that it still waits for its connection's turn (or is gone: null). */
export type TestAttempt = PublicDeliveryAttempt | null | 'waiting';

export class AlertRunner {
  private timer: ReturnType<typeof setInterval> | null = null;
  private evaluating: Promise<void> | null = null;
  private stopped = false;
  private readonly inFlight = new Map<string, Promise<PublicDeliveryAttempt | null>>();
  private readonly slots: SendSlots;
  /** test notices whose request waits for their first attempt to start, by delivery id */
  private readonly testsWaiting = new Map<string, (started: { attempt: Promise<PublicDeliveryAttempt | null> }) => void>();

  constructor(private readonly options: AlertRunnerOptions) {
    this.slots = new SendSlots({ totalMax: options.sendsInFlightMax ?? SENDS_IN_FLIGHT_MAX, perConnectionMax: SENDS_IN_FLIGHT_PER_CONNECTION_MAX });
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.options.evalIntervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for what is running (sends end within their timeout). */
  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.stopped = true;
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

  /** Starts the due sends not already in flight that the fair queue lets start now (send-slots.ts). */
  sendDue(): Promise<unknown> {
    if (this.stopped) return Promise.resolve();
    const waiting = new Map<string, DueDelivery[]>();
    for (const due of this.options.alerts.due(this.writtenConnections())) {
      if (this.inFlight.has(due.delivery.id)) continue;
      const queue = waiting.get(due.delivery.connectionId);
      if (queue === undefined) waiting.set(due.delivery.connectionId, [due]);
      else queue.push(due);
    }
    return Promise.all(this.slots.pick(waiting).map((due) => this.attempt(due)));
  }

  /**
   * "Send a test": the pending test delivery is sent in its connection's turn, behind the
   * connection's own sends, within its slots. Returns its first attempt, or 'waiting' when
   * the turn did not come within `testTurnWaitMs` (it is sent when it does), or null when
   * the delivery is gone.
   */
  async deliverNow(connectionId: string, deliveryId: string): Promise<TestAttempt> {
    const running = this.inFlight.get(deliveryId);
    if (running !== undefined) return running;
    if (this.options.alerts.pendingDelivery(connectionId, deliveryId) === undefined) return null;
    // wrapped: a promise resolved with a promise would wait for the attempt's end, not its start
    const started = Promise.withResolvers<{ attempt: Promise<PublicDeliveryAttempt | null> }>();
    this.testsWaiting.set(deliveryId, started.resolve);
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      void this.sendDue();
      const turn = new Promise<'waiting'>((resolve) => (timer = setTimeout(() => resolve('waiting'), this.options.testTurnWaitMs ?? TEST_TURN_WAIT_MS)));
      const turnCame = await Promise.race([started.promise, turn]);
      return turnCame === 'waiting' ? 'waiting' : await turnCame.attempt;
    } finally {
      clearTimeout(timer);
      this.testsWaiting.delete(deliveryId);
    }
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
        this.slots.release(delivery.connectionId);
        // a test waits for a slot its request is held open for: hand the freed one on now, not at the next evaluation
        if (this.testsWaiting.size > 0 && !this.options.engine.halted) void this.sendDue();
      });
    this.inFlight.set(delivery.id, tracked);
    this.testsWaiting.get(delivery.id)?.({ attempt: tracked });
    return tracked;
  }

  private writtenConnections(): string[] {
    return [...this.options.engine.connectionIds()].filter((id) => this.options.writes(id));
  }
}
