/**
 * Alerts for the routes and for the edge that evaluates and delivers them: rules and
 * channels of the connections a user's teams own (another team's are "not found"; reading
 * needs the viewer role, every change the admin role, and a webhook's address past its
 * host is shown to admins only, since it often holds the receiver's secret), the public
 * shapes of each, and the commits of evaluations and delivery outcomes. The engine never
 * sends anything itself: src/alerts/ asks it what is due and tells it what happened.
 */
import type { Access } from '../accounts/access.ts';
import { roleIncludes, type Role } from '../accounts/roles.ts';
import { linkBaseOf, type AlertChannel, type AlertKind, type AlertRule, type ChannelFormat, type DeliveryAttempt, type Delivery, type NoticeStatus, type RelativeTo, type RuleStatus } from '../alerts/alert-model.ts';
import type { ChannelInput, SendResult } from '../alerts/alert-book.ts';
import { decideEvaluation } from '../alerts/alert-evaluation.ts';
import { measure, type Measure } from '../alerts/alert-measures.ts';
import { checkRuleInput, type RuleInput } from '../alerts/rule-input.ts';
import { TestSendLimiter } from '../alerts/test-send-limiter.ts';
import { conditionText, valueText } from '../alerts/alert-text.ts';
import type { ConnectionActor } from '../connection/connection-actor.ts';
import { DomainError } from '../domain-error.ts';
import type { Engine } from '../engine.ts';

/** transitions GET /api/alerts lists, over all the user's connections */
export const RECENT_ALERTS_MAX = 100;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export interface PublicDeliveryAttempt {
  deliveryId: string;
  ruleId: string | null;
  status: NoticeStatus;
  attempt: number;
  at: string;
  outcome: DeliveryAttempt['outcome'];
  httpStatus: number | null;
  error: string | null;
}

export interface PublicChannel {
  id: string;
  connectionId: string;
  name: string;
  url: string;
  format: ChannelFormat;
  createdAt: string;
  /** where its notices' links point: PUBLIC_URL, else the dashboard address the channel was created through; null: relative links */
  linkBase: string | null;
  /** deliveries waiting for their next attempt */
  pending: number;
  /** the last attempts, newest first */
  deliveries: PublicDeliveryAttempt[];
}

/** A rule as the API shows it: what the user said of it, and its state, times as ISO strings. */
export interface PublicRule extends RuleInput {
  /** runtime_percentile against the week before; null otherwise */
  relativeTo: RelativeTo | null;
  id: string;
  connectionId: string;
  createdAt: string;
  updatedAt: string;
  status: RuleStatus;
  /** when it began firing (the last time, if resolved since) */
  firingSince: string | null;
  /** the value that fired it */
  firedValue: number | null;
  /** the last transition */
  changedAt: string | null;
  /** the condition in words */
  condition: string;
  /** the condition's value now, whether it holds, and the value in words */
  current: DescribedMeasure;
}

export interface DescribedMeasure extends Measure {
  text: string;
}

export interface PublicAlert {
  ruleId: string;
  ruleName: string;
  connectionId: string;
  kind: AlertKind;
  status: 'firing' | 'resolved';
  value: number | null;
  at: string;
}

export interface AlertsOverview {
  firing: PublicAlert[];
  /** transitions, newest first */
  recent: PublicAlert[];
}

/** A delivery to send, with its channel (resolved by the engine, so the edge never reads the book). */
export interface DueDelivery {
  delivery: Delivery;
  channel: AlertChannel;
}

export class AlertService {
  /** `publicUrl`: PUBLIC_URL, the base of every notice link when set. */
  constructor(
    private readonly engine: Engine,
    private readonly publicUrl: string | null = null,
    private readonly testSends = new TestSendLimiter(),
  ) {}

  listChannels(access: Access, connectionIdFilter?: string): PublicChannel[] {
    return this.readable(access, connectionIdFilter).flatMap(({ actor, role }) =>
      [...actor.alerts.channels.values()].map((channel) => this.describeChannel(actor, channel, role)),
    );
  }

  async createChannel(access: Access, connectionId: string, input: ChannelInput): Promise<{ channel: PublicChannel; secret: string }> {
    const actor = this.actorToChange(access, connectionId, 'create alert channels');
    const record = actor.alerts.decideCreateChannel(connectionId, input, this.engine.clock.nowMs());
    await this.engine.commit(record);
    return { channel: this.describeChannel(actor, record.channel, 'admin'), secret: record.channel.secret };
  }

  async deleteChannel(access: Access, channelId: string): Promise<void> {
    const actor = this.actorHolding(access, (alerts) => alerts.channels.has(channelId), 'alert channel', 'delete alert channels');
    await this.engine.commit(actor.alerts.decideDeleteChannel(channelId));
  }

  /**
   * Queues a test notice; the edge sends it in the connection's turn. Past the connection's
   * test rate (test-send-limiter.ts) it is refused 429 before anything is recorded.
   */
  async queueTest(access: Access, channelId: string): Promise<{ connectionId: string; deliveryId: string }> {
    const actor = this.actorHolding(access, (alerts) => alerts.channels.has(channelId), 'alert channel', 'test alert channels');
    const nowMs = this.engine.clock.nowMs();
    const record = actor.alerts.decideTest(channelId, nowMs);
    const waitSeconds = this.testSends.admit(actor.connectionId, nowMs);
    if (waitSeconds !== null) {
      throw new DomainError('RATE_LIMITED', `too many test notices for this connection; try again in ${waitSeconds} s`, undefined, undefined, { 'Retry-After': String(waitSeconds) });
    }
    await this.engine.commit(record);
    return { connectionId: actor.connectionId, deliveryId: record.delivery.id };
  }

  listRules(access: Access, connectionIdFilter?: string): PublicRule[] {
    const nowMs = this.engine.clock.nowMs();
    return this.actorsOf(access, connectionIdFilter).flatMap((actor) => [...actor.alerts.rules.values()].map((rule) => this.describeRule(actor, rule, nowMs)));
  }

  async createRule(access: Access, connectionId: string, input: RuleInput): Promise<PublicRule> {
    const actor = this.actorToChange(access, connectionId, 'create alert rules');
    const record = actor.alerts.decideSaveRule(connectionId, null, input, this.engine.clock.nowMs());
    await this.engine.commit(record);
    return this.describeRule(actor, record.rule, this.engine.clock.nowMs());
  }

  /** `changes` replaces the fields it names; the result must still fit the kind. */
  async updateRule(access: Access, ruleId: string, changes: Partial<RuleInput>): Promise<PublicRule> {
    const actor = this.actorHolding(access, (alerts) => alerts.rules.has(ruleId), 'alert rule', 'change alert rules');
    const rule = actor.alerts.rules.get(ruleId)!;
    const input: RuleInput = { ...inputOf(rule), ...changes };
    const record = actor.alerts.decideSaveRule(actor.connectionId, ruleId, input, this.engine.clock.nowMs());
    await this.engine.commit(record);
    return this.describeRule(actor, record.rule, this.engine.clock.nowMs());
  }

  async deleteRule(access: Access, ruleId: string): Promise<void> {
    const actor = this.actorHolding(access, (alerts) => alerts.rules.has(ruleId), 'alert rule', 'delete alert rules');
    await this.engine.commit(actor.alerts.decideDeleteRule(ruleId));
  }

  /** The value a rule would measure now, before it is saved (the dashboard's preview). */
  preview(access: Access, connectionId: string, input: RuleInput): DescribedMeasure {
    checkRuleInput(input);
    const actor = this.actorToChange(access, connectionId, 'write alert rules');
    const nowMs = this.engine.clock.nowMs();
    return described(input, measure({ ...input, createdAtMs: nowMs }, actor, nowMs));
  }

  overview(access: Access, connectionIdFilter?: string): AlertsOverview {
    const firing: PublicAlert[] = [];
    const recent: PublicAlert[] = [];
    for (const actor of this.actorsOf(access, connectionIdFilter)) {
      for (const rule of actor.alerts.rules.values()) {
        const state = actor.alerts.stateOf(rule.id);
        if (state.status !== 'firing') continue;
        firing.push({ ruleId: rule.id, ruleName: rule.name, connectionId: actor.connectionId, kind: rule.kind, status: 'firing', value: state.firedValue, at: iso(state.firingSinceMs)! });
      }
      for (const transition of actor.alerts.transitions) {
        const { ruleId, ruleName, kind, status, value } = transition;
        recent.push({ ruleId, ruleName, connectionId: actor.connectionId, kind, status, value, at: iso(transition.atMs)! });
      }
    }
    // ISO times of one format sort as text
    recent.sort((a, b) => b.at.localeCompare(a.at));
    return { firing, recent: recent.slice(0, RECENT_ALERTS_MAX) };
  }

  /** Evaluates the rules of each connection and commits what changed; returns how many rules were evaluated. */
  async evaluate(connectionIds: Iterable<string>): Promise<{ rules: number; transitions: number }> {
    let rules = 0;
    let transitions = 0;
    const commits: Promise<void>[] = [];
    for (const id of connectionIds) {
      const actor = this.engine.connection(id);
      if (actor === undefined || actor.alerts.rules.size === 0) continue;
      rules += actor.alerts.rules.size;
      const record = decideEvaluation(actor, this.engine.clock.nowMs());
      if (record === null) continue;
      transitions += record.states.filter((entry) => entry.state.changedAtMs === record.atMs).length;
      commits.push(this.engine.commit(record));
    }
    await Promise.all(commits);
    return { rules, transitions };
  }

  /** Deliveries of these connections whose next attempt is due now. */
  due(connectionIds: Iterable<string>): DueDelivery[] {
    const nowMs = this.engine.clock.nowMs();
    const due: DueDelivery[] = [];
    for (const id of connectionIds) {
      const alerts = this.engine.connection(id)?.alerts;
      if (alerts === undefined) continue;
      for (const delivery of alerts.dueDeliveries(nowMs)) {
        const channel = alerts.channels.get(delivery.channelId);
        if (channel !== undefined) due.push({ delivery, channel });
      }
    }
    return due;
  }

  /** One pending delivery and its channel; undefined once it is gone. */
  pendingDelivery(connectionId: string, deliveryId: string): DueDelivery | undefined {
    const alerts = this.engine.connection(connectionId)?.alerts;
    const delivery = alerts?.pending.get(deliveryId);
    const channel = delivery === undefined ? undefined : alerts!.channels.get(delivery.channelId);
    return channel === undefined ? undefined : { delivery: delivery!, channel };
  }

  /** Commits what one attempt came to; returns the attempt as the channel's history shows it (null when the delivery is gone). */
  async recordAttempt(connectionId: string, deliveryId: string, result: SendResult): Promise<PublicDeliveryAttempt | null> {
    const alerts = this.engine.connection(connectionId)?.alerts;
    const record = alerts?.decideAttempt(deliveryId, result, this.engine.clock.nowMs()) ?? null;
    if (record === null) return null;
    const channelId = alerts!.pending.get(deliveryId)!.channelId;
    await this.engine.commit(record);
    const attempts = alerts!.history.get(channelId) ?? [];
    const attempt = attempts.findLast((entry) => entry.deliveryId === deliveryId);
    return attempt === undefined ? null : describeAttempt(attempt);
  }

  /** Rules firing now over all connections (the /metrics gauge). */
  firingCount(): number {
    let firing = 0;
    for (const id of this.engine.connectionIds()) {
      const alerts = this.engine.connection(id)!.alerts;
      for (const state of alerts.states.values()) if (state.status === 'firing') firing++;
    }
    return firing;
  }

  private describeChannel(actor: ConnectionActor, channel: AlertChannel, role: Role): PublicChannel {
    const alerts = actor.alerts;
    let pending = 0;
    for (const delivery of alerts.pending.values()) if (delivery.channelId === channel.id) pending++;
    const deliveries = (alerts.history.get(channel.id) ?? []).map(describeAttempt).reverse();
    return {
      id: channel.id,
      connectionId: channel.connectionId,
      name: channel.name,
      url: roleIncludes(role, 'admin') ? channel.url : urlUpToHost(channel.url),
      format: channel.format,
      createdAt: iso(channel.createdAtMs)!,
      linkBase: linkBaseOf(channel, this.publicUrl),
      pending,
      deliveries,
    };
  }

  private describeRule(actor: ConnectionActor, rule: AlertRule, nowMs: number): PublicRule {
    const state = actor.alerts.stateOf(rule.id);
    return {
      id: rule.id,
      connectionId: rule.connectionId,
      name: rule.name,
      kind: rule.kind,
      queue: rule.queue,
      task: rule.task,
      threshold: rule.threshold,
      windowSeconds: rule.windowSeconds,
      relativeTo: rule.relativeTo ?? null,
      channelIds: [...rule.channelIds],
      includePaused: rule.includePaused ?? false,
      createdAt: iso(rule.createdAtMs)!,
      updatedAt: iso(rule.updatedAtMs)!,
      status: state.status,
      firingSince: iso(state.firingSinceMs),
      firedValue: state.firedValue,
      changedAt: iso(state.changedAtMs),
      condition: conditionText(rule),
      current: described(rule, measure(rule, actor, nowMs)),
    };
  }

  private readable(access: Access, connectionIdFilter: string | undefined): Array<{ actor: ConnectionActor; role: Role }> {
    const readable: Array<{ actor: ConnectionActor; role: Role }> = [];
    for (const { connection, role } of access.connections(connectionIdFilter)) {
      const actor = this.engine.connection(connection.id);
      if (actor !== undefined) readable.push({ actor, role });
    }
    return readable;
  }

  private actorsOf(access: Access, connectionIdFilter: string | undefined): ConnectionActor[] {
    return this.readable(access, connectionIdFilter).map(({ actor }) => actor);
  }

  /** The connection `connectionId`, when the user is an admin of its team; another team's is not found, as an unknown one. */
  private actorToChange(access: Access, connectionId: string, doing: string): ConnectionActor {
    access.requireConnection(connectionId, 'admin', doing);
    const actor = this.engine.connection(connectionId);
    if (actor === undefined) throw new DomainError('NOT_FOUND', 'connection not found');
    return actor;
  }

  /** The connection holding a rule or channel, when the user may see it (else not found) and is an admin of its team. */
  private actorHolding(access: Access, holds: (alerts: ConnectionActor['alerts']) => boolean, what: string, doing: string): ConnectionActor {
    const actor = this.actorsOf(access, undefined).find((candidate) => holds(candidate.alerts));
    if (actor === undefined) throw new DomainError('NOT_FOUND', `${what} not found`);
    return this.actorToChange(access, actor.connectionId, doing);
  }
}

/** What a viewer sees of a webhook's address: its scheme and host, not the path and query that often hold a secret. */
function urlUpToHost(url: string): string {
  try {
    return `${new URL(url).origin}/…`;
  } catch {
    return '…';
  }
}

function described(rule: Pick<RuleInput, 'kind' | 'relativeTo'>, measured: Measure): DescribedMeasure {
  return { ...measured, text: measured.paused === true ? 'paused' : valueText(rule.kind, measured.value, rule.relativeTo ?? null) };
}

function inputOf(rule: AlertRule): RuleInput {
  // rules saved before relativeTo or includePaused have none
  return {
    name: rule.name,
    kind: rule.kind,
    queue: rule.queue,
    task: rule.task,
    threshold: rule.threshold,
    windowSeconds: rule.windowSeconds,
    channelIds: rule.channelIds,
    relativeTo: rule.relativeTo ?? null,
    includePaused: rule.includePaused ?? false,
  };
}

function describeAttempt(attempt: DeliveryAttempt): PublicDeliveryAttempt {
  return {
    deliveryId: attempt.deliveryId,
    ruleId: attempt.ruleId,
    status: attempt.noticeStatus,
    attempt: attempt.attempt,
    at: iso(attempt.atMs)!,
    outcome: attempt.outcome,
    httpStatus: attempt.httpStatus,
    error: attempt.error,
  };
}
