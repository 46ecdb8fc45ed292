/**
 * One evaluation of a connection's rules: each rule's measure now against its state,
 * and the record of what changed (a sustained condition starting or breaking, a rule
 * firing or resolving) with one delivery per channel for each transition. Null when
 * nothing changed, so a quiet tick writes nothing to the log.
 */
import type { ConnectionActor } from '../connection/connection-actor.ts';
import { newId } from '../ids.ts';
import { isSustainedKind, type AlertRule, type Delivery, type Notice, type RuleState } from './alert-model.ts';
import type { AlertEvaluatedRecord } from './alert-records.ts';
import { measure } from './alert-measures.ts';

export function decideEvaluation(actor: ConnectionActor, nowMs: number): AlertEvaluatedRecord | null {
  const book = actor.alerts;
  const states: AlertEvaluatedRecord['states'] = [];
  const deliveries: Delivery[] = [];
  for (const rule of book.rules.values()) {
    const before = book.stateOf(rule.id);
    const { value, breached } = measure(rule, actor, nowMs);
    const next: RuleState = { ...before };
    let firing = breached;
    if (isSustainedKind(rule.kind)) {
      next.breachSinceMs = breached ? (before.breachSinceMs ?? nowMs) : null;
      firing = next.breachSinceMs !== null && nowMs - next.breachSinceMs >= rule.windowSeconds * 1000;
    }
    if (firing && before.status !== 'firing') {
      next.status = 'firing';
      next.firingSinceMs = nowMs;
      next.firedValue = value;
      next.changedAtMs = nowMs;
      deliveries.push(...deliveriesOf(rule, notice(rule, next, value, nowMs), nowMs));
    } else if (!firing && before.status === 'firing') {
      next.status = 'resolved';
      next.changedAtMs = nowMs;
      deliveries.push(...deliveriesOf(rule, notice(rule, next, value, nowMs), nowMs));
    }
    if (!sameState(before, next)) states.push({ ruleId: rule.id, state: next });
  }
  if (states.length === 0) return null;
  return { t: 'alert.evaluated', connectionId: actor.connectionId, atMs: nowMs, states, deliveries };
}

function notice(rule: AlertRule, state: RuleState, value: number | null, nowMs: number): Notice {
  return {
    status: state.status === 'firing' ? 'firing' : 'resolved',
    ruleId: rule.id,
    ruleName: rule.name,
    kind: rule.kind,
    queue: rule.queue,
    task: rule.task,
    value,
    threshold: rule.threshold,
    windowSeconds: rule.windowSeconds,
    ...(rule.relativeTo == null ? {} : { relativeTo: rule.relativeTo }),
    firingSinceMs: state.firingSinceMs,
    resolvedAtMs: state.status === 'resolved' ? nowMs : null,
    atMs: nowMs,
  };
}

function deliveriesOf(rule: AlertRule, notice: Notice, nowMs: number): Delivery[] {
  return rule.channelIds.map((channelId) => ({
    id: newId(),
    connectionId: rule.connectionId,
    channelId,
    notice,
    createdAtMs: nowMs,
    attempts: 0,
    nextAttemptAtMs: nowMs,
  }));
}

function sameState(a: RuleState, b: RuleState): boolean {
  return a.status === b.status && a.breachSinceMs === b.breachSinceMs && a.firingSinceMs === b.firingSinceMs && a.firedValue === b.firedValue && a.changedAtMs === b.changedAtMs;
}
