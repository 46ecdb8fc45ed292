/**
 * One connection's alerts: its rules and their states, its webhook channels, the
 * deliveries waiting to be sent and what became of the last ones. `decide*` methods are
 * pure (state + input + clock -> record); `evolve` is the only code that changes state,
 * on the live path and in replay alike, so a restart or a replica holds the same firing
 * alerts and the same queue.
 */
import { randomBytes } from 'node:crypto';
import { DomainError, validationError } from '../domain-error.ts';
import { newId } from '../ids.ts';
import {
  ALERT_LIMITS,
  backoffMs,
  DELIVERY_RETRY,
  initialRuleState,
  type AlertChannel,
  type AlertRule,
  type ChannelFormat,
  type Delivery,
  type DeliveryAttempt,
  type RuleState,
  type Transition,
} from './alert-model.ts';
import type {
  AlertChannelCreatedRecord,
  AlertChannelDeletedRecord,
  AlertDeliveryAttemptedRecord,
  AlertEvaluatedRecord,
  AlertRecord,
  AlertRuleDeletedRecord,
  AlertRuleSavedRecord,
  AlertTestQueuedRecord,
} from './alert-records.ts';
import { checkRuleInput, type RuleInput } from './rule-input.ts';

export interface ChannelInput {
  name: string;
  url: string;
  format: ChannelFormat;
  /** see AlertChannel.dashboardUrl */
  dashboardUrl: string | null;
}

/** What a send came to, as the edge saw it. */
export interface SendResult {
  ok: boolean;
  httpStatus: number | null;
  error: string | null;
  /** false for a refusal that a retry cannot change (the address guard, a bad URL) */
  retryable: boolean;
}

export interface AlertBookSnapshot {
  rules: AlertRule[];
  states: Array<{ ruleId: string; state: RuleState }>;
  channels: AlertChannel[];
  pending: Delivery[];
  history: DeliveryAttempt[];
  transitions: Transition[];
}

const SECRET_PREFIX = 'whsec_';
const DROPPED_ERROR = 'given up unsent: too many deliveries were waiting';

export class AlertBook {
  readonly rules = new Map<string, AlertRule>();
  readonly states = new Map<string, RuleState>();
  readonly channels = new Map<string, AlertChannel>();
  /** in the order they were queued */
  readonly pending = new Map<string, Delivery>();
  /** per channel, oldest first, at most ALERT_LIMITS.deliveryHistoryPerChannel */
  readonly history = new Map<string, DeliveryAttempt[]>();
  /** oldest first, at most ALERT_LIMITS.recentTransitionsMax */
  readonly transitions: Transition[] = [];

  get isEmpty(): boolean {
    return this.rules.size === 0 && this.channels.size === 0 && this.pending.size === 0 && this.transitions.length === 0;
  }

  stateOf(ruleId: string): RuleState {
    return this.states.get(ruleId) ?? initialRuleState();
  }

  decideCreateChannel(connectionId: string, input: ChannelInput, nowMs: number): AlertChannelCreatedRecord {
    if (this.channels.size >= ALERT_LIMITS.channelsPerConnectionMax) {
      throw new DomainError('CONFLICT', `a connection has at most ${ALERT_LIMITS.channelsPerConnectionMax} alert channels`);
    }
    const channel: AlertChannel = {
      id: newId(),
      connectionId,
      name: input.name,
      url: input.url,
      format: input.format,
      secret: SECRET_PREFIX + randomBytes(32).toString('base64url'),
      createdAtMs: nowMs,
      dashboardUrl: input.dashboardUrl,
    };
    return { t: 'alert.channel.created', connectionId, channel };
  }

  decideDeleteChannel(channelId: string): AlertChannelDeletedRecord {
    const channel = this.channelOrThrow(channelId);
    return { t: 'alert.channel.deleted', connectionId: channel.connectionId, channelId };
  }

  /** A new rule (`ruleId` null) or the whole of an edited one. */
  decideSaveRule(connectionId: string, ruleId: string | null, input: RuleInput, nowMs: number): AlertRuleSavedRecord {
    checkRuleInput(input);
    const existing = ruleId === null ? undefined : this.ruleOrThrow(ruleId);
    if (existing === undefined && this.rules.size >= ALERT_LIMITS.rulesPerConnectionMax) {
      throw new DomainError('CONFLICT', `a connection has at most ${ALERT_LIMITS.rulesPerConnectionMax} alert rules`);
    }
    const unknown = input.channelIds.filter((id) => !this.channels.has(id));
    if (unknown.length > 0) throw validationError('channelIds', `no channel ${unknown.join(', ')} in this connection`);
    const rule: AlertRule = {
      id: existing?.id ?? newId(),
      connectionId,
      ...input,
      channelIds: [...input.channelIds],
      createdAtMs: existing?.createdAtMs ?? nowMs,
      updatedAtMs: nowMs,
    };
    return { t: 'alert.rule.saved', connectionId, rule };
  }

  decideDeleteRule(ruleId: string): AlertRuleDeletedRecord {
    const rule = this.ruleOrThrow(ruleId);
    return { t: 'alert.rule.deleted', connectionId: rule.connectionId, ruleId };
  }

  decideTest(channelId: string, nowMs: number): AlertTestQueuedRecord {
    const channel = this.channelOrThrow(channelId);
    const delivery: Delivery = {
      id: newId(),
      connectionId: channel.connectionId,
      channelId,
      notice: {
        status: 'test',
        ruleId: null,
        ruleName: `test of channel ${channel.name}`,
        kind: null,
        queue: null,
        task: null,
        value: null,
        threshold: null,
        windowSeconds: null,
        firingSinceMs: null,
        resolvedAtMs: null,
        atMs: nowMs,
      },
      createdAtMs: nowMs,
      attempts: 0,
      nextAttemptAtMs: nowMs,
    };
    return { t: 'alert.test.queued', connectionId: channel.connectionId, delivery };
  }

  /** Pending deliveries whose next attempt is due at `nowMs`, oldest first. */
  dueDeliveries(nowMs: number): Delivery[] {
    return [...this.pending.values()].filter((delivery) => delivery.nextAttemptAtMs <= nowMs);
  }

  /** The outcome of an attempt: delivered, retried after a backoff, or given up past the retry duration. Null when the delivery is gone. */
  decideAttempt(deliveryId: string, result: SendResult, nowMs: number): AlertDeliveryAttemptedRecord | null {
    const delivery = this.pending.get(deliveryId);
    if (delivery === undefined) return null;
    const base = { t: 'alert.delivery.attempted' as const, connectionId: delivery.connectionId, deliveryId, atMs: nowMs, httpStatus: result.httpStatus, error: result.error };
    if (result.ok) return { ...base, outcome: 'delivered', nextAttemptAtMs: null };
    const nextAttemptAtMs = nowMs + backoffMs(delivery.attempts + 1);
    const withinRetryDuration = nextAttemptAtMs - delivery.createdAtMs <= DELIVERY_RETRY.retryDurationMs;
    return result.retryable && withinRetryDuration ? { ...base, outcome: 'retrying', nextAttemptAtMs } : { ...base, outcome: 'failed', nextAttemptAtMs: null };
  }

  evolve(record: AlertRecord): void {
    switch (record.t) {
      case 'alert.channel.created':
        this.channels.set(record.channel.id, record.channel);
        return;
      case 'alert.channel.deleted':
        this.channels.delete(record.channelId);
        this.history.delete(record.channelId);
        for (const [id, delivery] of this.pending) if (delivery.channelId === record.channelId) this.pending.delete(id);
        for (const rule of this.rules.values()) {
          if (rule.channelIds.includes(record.channelId)) rule.channelIds = rule.channelIds.filter((id) => id !== record.channelId);
        }
        return;
      case 'alert.rule.saved': {
        const before = this.rules.get(record.rule.id);
        // a copy: a later channel deletion edits the rule's list, never the record's
        this.rules.set(record.rule.id, { ...record.rule, channelIds: [...record.rule.channelIds] });
        // an edited condition starts its sustained count afresh; firing stays firing until an evaluation says otherwise
        const state = this.states.get(record.rule.id);
        if (before !== undefined && state !== undefined) state.breachSinceMs = null;
        return;
      }
      case 'alert.rule.deleted':
        this.rules.delete(record.ruleId);
        this.states.delete(record.ruleId);
        return;
      case 'alert.evaluated':
        this.applyEvaluation(record);
        return;
      case 'alert.test.queued':
        this.enqueue(record.delivery);
        return;
      case 'alert.delivery.attempted':
        this.applyAttempt(record);
        return;
    }
  }

  toSnapshot(): AlertBookSnapshot {
    return structuredClone({
      rules: [...this.rules.values()],
      states: [...this.states].map(([ruleId, state]) => ({ ruleId, state })),
      channels: [...this.channels.values()],
      pending: [...this.pending.values()],
      history: [...this.history.values()].flat(),
      transitions: this.transitions,
    });
  }

  restore(snapshot: AlertBookSnapshot): void {
    for (const rule of snapshot.rules) this.rules.set(rule.id, rule);
    for (const { ruleId, state } of snapshot.states) this.states.set(ruleId, state);
    for (const channel of snapshot.channels) this.channels.set(channel.id, channel);
    for (const delivery of snapshot.pending) this.pending.set(delivery.id, delivery);
    for (const attempt of snapshot.history) this.remember(attempt);
    this.transitions.push(...snapshot.transitions);
  }

  private applyEvaluation(record: AlertEvaluatedRecord): void {
    for (const { ruleId, state } of record.states) {
      if (!this.rules.has(ruleId)) continue;
      const before = this.states.get(ruleId);
      this.states.set(ruleId, { ...state });
      const rule = this.rules.get(ruleId)!;
      if ((state.status === 'firing' || state.status === 'resolved') && before?.status !== state.status) {
        this.transitions.push({ ruleId, ruleName: rule.name, kind: rule.kind, status: state.status, value: state.firedValue, atMs: record.atMs });
        if (this.transitions.length > ALERT_LIMITS.recentTransitionsMax) this.transitions.shift();
      }
    }
    for (const delivery of record.deliveries) this.enqueue(delivery);
  }

  private enqueue(delivery: Delivery): void {
    if (!this.channels.has(delivery.channelId)) return;
    this.pending.set(delivery.id, { ...delivery });
    while (this.pending.size > ALERT_LIMITS.pendingDeliveriesMax) {
      const [oldest] = this.pending.values();
      this.pending.delete(oldest!.id);
      this.remember(attemptOf(oldest!, delivery.createdAtMs, 'failed', null, DROPPED_ERROR));
    }
  }

  private applyAttempt(record: AlertDeliveryAttemptedRecord): void {
    const delivery = this.pending.get(record.deliveryId);
    if (delivery === undefined) return;
    delivery.attempts += 1;
    this.remember(attemptOf(delivery, record.atMs, record.outcome, record.httpStatus, record.error));
    if (record.outcome === 'retrying' && record.nextAttemptAtMs !== null) delivery.nextAttemptAtMs = record.nextAttemptAtMs;
    else this.pending.delete(record.deliveryId);
  }

  private remember(attempt: DeliveryAttempt): void {
    let attempts = this.history.get(attempt.channelId);
    if (attempts === undefined) this.history.set(attempt.channelId, (attempts = []));
    attempts.push(attempt);
    if (attempts.length > ALERT_LIMITS.deliveryHistoryPerChannel) attempts.shift();
  }

  private ruleOrThrow(ruleId: string): AlertRule {
    const rule = this.rules.get(ruleId);
    if (rule === undefined) throw new DomainError('NOT_FOUND', 'alert rule not found');
    return rule;
  }

  private channelOrThrow(channelId: string): AlertChannel {
    const channel = this.channels.get(channelId);
    if (channel === undefined) throw new DomainError('NOT_FOUND', 'alert channel not found');
    return channel;
  }
}

function attemptOf(delivery: Delivery, atMs: number, outcome: DeliveryAttempt['outcome'], httpStatus: number | null, error: string | null): DeliveryAttempt {
  return {
    deliveryId: delivery.id,
    channelId: delivery.channelId,
    ruleId: delivery.notice.ruleId,
    noticeStatus: delivery.notice.status,
    attempt: delivery.attempts,
    atMs,
    outcome,
    httpStatus,
    error,
  };
}
