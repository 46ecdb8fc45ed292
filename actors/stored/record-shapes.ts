/**
 * The shape of every log record type (actors/engine.ts `EngineRecord`), checked when a
 * record is read back: at recovery, and as a cluster replica follows the log. A record of
 * a type this version does not know, or whose fields are not what its type holds, throws
 * a ShapeError saying what was expected: replaying it would skip it without a word or
 * apply half of it.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import type { EngineRecord } from '../engine.ts';
import { describeValue, shapeCheck, ShapeError } from './shape-check.ts';
import {
  AckedOutcomeShape,
  ControlCommandShape,
  ControlsShape,
  frameworkShape,
  AlertChannelShape,
  AlertRuleShape,
  AuditEntryShape,
  ConnectionShape,
  MembershipShape,
  PasswordLinkShape,
  SavedViewShape,
  SsoIdentityShape,
  TeamShape,
  DeliveryShape,
  deliveryOutcome,
  EVENT_SHAPES,
  jobAction,
  MarkerShape,
  number,
  nullable,
  RuleStateShape,
  SessionShape,
  text,
  UserShape,
} from './stored-types.ts';

const RECORD_SHAPES: Record<EngineRecord['t'], TSchema> = {
  'user.created': Type.Object({ user: UserShape }),
  'session.created': Type.Object({ session: SessionShape }),
  'session.deleted': Type.Object({ tokenHash: text() }),
  'connection.created': Type.Object({ connection: ConnectionShape }),
  'connection.deleted': Type.Object({ connectionId: text() }),
  'connection.moved': Type.Object({ connectionId: text(), teamId: text() }),
  'team.created': Type.Object({ team: TeamShape }),
  'team.renamed': Type.Object({ teamId: text(), name: text() }),
  'team.deleted': Type.Object({ teamId: text() }),
  'member.set': Type.Object({ membership: MembershipShape }),
  'member.removed': Type.Object({ teamId: text(), userId: text() }),
  'user.disabled': Type.Object({ userId: text(), disabled: Type.Boolean() }),
  'user.removed': Type.Object({ userId: text() }),
  'user.password': Type.Object({ userId: text(), passwordHash: text(), keepSession: nullable(text()), link: nullable(text()) }),
  'user.sso-linked': Type.Object({ userId: text(), sso: SsoIdentityShape }),
  'password-link.created': Type.Object({ link: PasswordLinkShape }),
  'view.saved': Type.Object({ view: SavedViewShape }),
  'view.deleted': Type.Object({ viewId: text() }),
  'audit.recorded': Type.Object({ entry: AuditEntryShape, connectionId: Type.Optional(text()) }),
  // the events are checked one by one below, for a message naming the one that is wrong
  ingest: Type.Object({ connectionId: text(), receivedAtMs: number(), events: Type.Array(Type.Object({ kind: Type.Union([Type.Literal('job'), Type.Literal('worker'), Type.Literal('queue')]) })) }),
  'job.action': Type.Object({ connectionId: text(), atMs: number(), action: jobAction, targets: Type.Array(Type.Object({ jobId: text(), commandId: text() })) }),
  'commands.acked': Type.Object({
    connectionId: text(),
    ids: Type.Array(text()),
    failed: Type.Optional(Type.Array(Type.Object({ id: text(), reason: nullable(text()) }))),
    outcomes: Type.Optional(Type.Array(AckedOutcomeShape)),
    atMs: Type.Optional(number()),
  }),
  'control.requested': Type.Object({ connectionId: text(), atMs: number(), command: ControlCommandShape }),
  'agent.capabilities': Type.Object({ connectionId: text(), atMs: number(), framework: frameworkShape, agentVersion: text(), controls: ControlsShape }),
  'commands.expired': Type.Object({ connectionId: text(), atMs: number(), ids: Type.Array(text()) }),
  'marker.added': Type.Object({ connectionId: text(), marker: MarkerShape }),
  'marker.deleted': Type.Object({ connectionId: text(), markerId: text() }),
  retention: Type.Object({ atMs: number(), partition: Type.Optional(number()), partitions: Type.Optional(number()) }),
  'log.keepalive': Type.Object({ atMs: number() }),
  'alert.channel.created': Type.Object({ connectionId: text(), channel: AlertChannelShape }),
  'alert.channel.deleted': Type.Object({ connectionId: text(), channelId: text() }),
  'alert.rule.saved': Type.Object({ connectionId: text(), rule: AlertRuleShape }),
  'alert.rule.deleted': Type.Object({ connectionId: text(), ruleId: text() }),
  'alert.evaluated': Type.Object({
    connectionId: text(),
    atMs: number(),
    states: Type.Array(Type.Object({ ruleId: text(), state: RuleStateShape })),
    deliveries: Type.Array(DeliveryShape),
  }),
  'alert.test.queued': Type.Object({ connectionId: text(), delivery: DeliveryShape }),
  'alert.delivery.attempted': Type.Object({
    connectionId: text(),
    deliveryId: text(),
    atMs: number(),
    outcome: deliveryOutcome,
    httpStatus: nullable(number()),
    error: nullable(text()),
    nextAttemptAtMs: nullable(number()),
  }),
};

export const RECORD_TYPES: readonly string[] = Object.keys(RECORD_SHAPES);

const CHECKS = new Map(Object.entries(RECORD_SHAPES).map(([type, schema]) => [type, shapeCheck(`a '${type}' record`, schema)]));
const EVENT_CHECKS = Object.fromEntries(Object.entries(EVENT_SHAPES).map(([kind, schema]) => [kind, shapeCheck(`a ${kind} event`, schema)])) as Record<keyof typeof EVENT_SHAPES, (value: unknown) => unknown>;

/** The record, typed, when its shape is one this version applies; otherwise a ShapeError. */
export function checkRecordShape(raw: unknown): EngineRecord {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new ShapeError(`expected a record (an object with a type 't'), found ${describeValue(raw)}`);
  const type = (raw as { t?: unknown }).t;
  const check = typeof type === 'string' ? CHECKS.get(type) : undefined;
  if (check === undefined) throw new ShapeError(`expected a record type this version knows (${RECORD_TYPES.join(', ')}), found ${describeValue(type)}`);
  check(raw);
  if (type === 'ingest') {
    for (const [index, event] of (raw as { events: Array<{ kind: keyof typeof EVENT_SHAPES }> }).events.entries()) {
      try {
        EVENT_CHECKS[event.kind](event);
      } catch (error) {
        throw new ShapeError(`an 'ingest' record's event ${index}: ${(error as Error).message}`);
      }
    }
  }
  return raw as EngineRecord;
}
