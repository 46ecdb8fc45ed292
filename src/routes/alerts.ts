/**
 * The alert routes and their request models: channels (webhooks), rules, the preview of a
 * rule's value, the overview of what fires, and the "send a test" action. A channel's URL
 * passes the outbound guard before it is stored (src/alerts/webhook-guard.ts).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import { ALERT_KINDS, ALERT_LIMITS, CHANNEL_FORMATS, RELATIVE_TO } from '../../actors/alerts/alert-model.ts';
import type { RuleInput } from '../../actors/alerts/rule-input.ts';
import { validationError } from '../../actors/domain-error.ts';
import { checkWebhookTarget, WebhookRefusal, type GuardOptions } from '../alerts/webhook-guard.ts';
import type { AppDeps } from '../app-deps.ts';
import { accessOf } from '../http/access-guard.ts';
import { reachedAddress } from '../http/client-address.ts';
import { bodyReader, FORM_BODY_BYTES_MAX } from '../http/read-body.ts';
import { model, validBody, validQuery } from '../http/validate.ts';
import { connectionIdParam, literals } from './list-params.ts';

const name = () => Type.String({ minLength: 1, maxLength: ALERT_LIMITS.nameLengthMax, pattern: '\\S' });
const selector = () => Type.Union([Type.String({ minLength: 1, maxLength: ALERT_LIMITS.selectorLengthMax }), Type.Null()]);
const connectionId = () => Type.String({ minLength: 1, maxLength: 64 });

const RULE_FIELDS = {
  name: name(),
  kind: literals(ALERT_KINDS),
  queue: Type.Optional(selector()),
  task: Type.Optional(selector()),
  threshold: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: ALERT_LIMITS.depthThresholdMax }), Type.Null()])),
  windowSeconds: Type.Integer({ minimum: ALERT_LIMITS.windowSecondsMin, maximum: ALERT_LIMITS.windowSecondsMax }),
  relativeTo: Type.Optional(Type.Union([literals(RELATIVE_TO), Type.Null()], { description: 'runtime_percentile only: `week_before` compares with the same window 7 days earlier (`threshold` times it); null or absent, with `threshold` in ms' })),
  channelIds: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: ALERT_LIMITS.channelsPerRuleMax }),
  includePaused: Type.Optional(Type.Boolean({ description: 'queue_depth only: measure paused queues too (default false: a paused queue does not fire)' })),
};

export const CreateChannelBody = model(
  Type.Object(
    {
      connectionId: connectionId(),
      name: name(),
      url: Type.String({ minLength: 1, maxLength: ALERT_LIMITS.urlLengthMax }),
      format: literals(CHANNEL_FORMATS),
    },
    { additionalProperties: false },
  ),
);

export const CreateRuleBody = model(Type.Object({ connectionId: connectionId(), ...RULE_FIELDS }, { additionalProperties: false }));

export const UpdateRuleBody = model(Type.Partial(Type.Object(RULE_FIELDS, { additionalProperties: false }), { additionalProperties: false, minProperties: 1 }));

export const PreviewRuleBody = model(
  Type.Object(
    {
      connectionId: connectionId(),
      kind: RULE_FIELDS.kind,
      queue: RULE_FIELDS.queue,
      task: RULE_FIELDS.task,
      threshold: RULE_FIELDS.threshold,
      windowSeconds: RULE_FIELDS.windowSeconds,
      relativeTo: RULE_FIELDS.relativeTo,
      includePaused: RULE_FIELDS.includePaused,
    },
    { additionalProperties: false },
  ),
);

export const AlertListParams = model(Type.Object({ connectionId: connectionIdParam() }));

type RuleFields = Partial<Static<typeof CreateRuleBody.schema>>;

/** Absent selectors and threshold are null. */
function ruleInputOf(body: Static<typeof CreateRuleBody.schema>): RuleInput {
  return {
    name: body.name,
    kind: body.kind,
    queue: body.queue ?? null,
    task: body.task ?? null,
    threshold: body.threshold ?? null,
    windowSeconds: body.windowSeconds,
    channelIds: body.channelIds,
    relativeTo: body.relativeTo ?? null,
    includePaused: body.includePaused ?? false,
  };
}

/** The fields a PATCH names, with an explicit null kept (it clears the field). */
function ruleChangesOf(body: RuleFields): Partial<RuleInput> {
  const changes: Partial<RuleInput> = {};
  for (const key of ['name', 'kind', 'queue', 'task', 'threshold', 'windowSeconds', 'channelIds', 'relativeTo', 'includePaused'] as const) {
    if (body[key] !== undefined) (changes as Record<string, unknown>)[key] = body[key];
  }
  return changes;
}

/** A channel's URL passes the outbound guard before it is stored; a refusal is the field's error. */
async function checkTarget(url: string, guard: GuardOptions): Promise<void> {
  try {
    await checkWebhookTarget(url, guard);
  } catch (error) {
    if (error instanceof WebhookRefusal) throw validationError('url', error.message);
    throw error;
  }
}

/**
 * Alert channels (webhooks) and rules of the connections of the user's teams, the alerts
 * firing now, and the "send a test" action. Another team's rules and channels are "not found".
 */
export function alertRoutes(deps: AppDeps) {
  const { alerts, alertDelivery } = deps;
  const body = bodyReader(deps);
  return new Elysia({ name: 'alerts' })
    .get('/api/alert-channels', (context) => {
      const query = validQuery(AlertListParams, context.query);
      return { data: alerts.listChannels(accessOf(context), query.connectionId) };
    })
    .post(
      '/api/alert-channels',
      async (context) => {
        const access = accessOf(context);
        const input = validBody(CreateChannelBody, await body.json(context.request, FORM_BODY_BYTES_MAX));
        await checkTarget(input.url, alertDelivery.guard);
        // the links its notices carry point where this (signed-in, same-origin) request came in
        const dashboardUrl = reachedAddress(context.request, context.server, deps.config);
        const created = await alerts.createChannel(access, input.connectionId, { name: input.name, url: input.url, format: input.format, dashboardUrl });
        context.set.status = 201;
        return created;
      },
      { parse: 'none' },
    )
    .delete('/api/alert-channels/:id', async (context) => {
      await alerts.deleteChannel(accessOf(context), context.params.id);
      context.set.status = 204;
    })
    .post(
      '/api/alert-channels/:id/test',
      async (context) => {
        const queued = await alerts.queueTest(accessOf(context), context.params.id);
        const attempt = await alertDelivery.runner.deliverNow(queued.connectionId, queued.deliveryId);
        return attempt === 'waiting' ? { deliveryId: queued.deliveryId, attempt: null, waiting: true } : { deliveryId: queued.deliveryId, attempt, waiting: false };
      },
      { parse: 'none' },
    )
    .get('/api/alert-rules', (context) => {
      const query = validQuery(AlertListParams, context.query);
      return { data: alerts.listRules(accessOf(context), query.connectionId) };
    })
    .post(
      '/api/alert-rules',
      async (context) => {
        const access = accessOf(context);
        const input = validBody(CreateRuleBody, await body.json(context.request, FORM_BODY_BYTES_MAX));
        const created = await alerts.createRule(access, input.connectionId, ruleInputOf(input));
        context.set.status = 201;
        return created;
      },
      { parse: 'none' },
    )
    .post(
      '/api/alert-rules/preview',
      async (context) => {
        const access = accessOf(context);
        const input = validBody(PreviewRuleBody, await body.json(context.request, FORM_BODY_BYTES_MAX));
        return alerts.preview(access, input.connectionId, ruleInputOf({ ...input, name: 'preview', channelIds: [] }));
      },
      { parse: 'none' },
    )
    .patch(
      '/api/alert-rules/:id',
      async (context) => {
        const access = accessOf(context);
        const changes = validBody(UpdateRuleBody, await body.json(context.request, FORM_BODY_BYTES_MAX));
        return alerts.updateRule(access, context.params.id, ruleChangesOf(changes));
      },
      { parse: 'none' },
    )
    .delete('/api/alert-rules/:id', async (context) => {
      await alerts.deleteRule(accessOf(context), context.params.id);
      context.set.status = 204;
    })
    .get('/api/alerts', (context) => {
      const query = validQuery(AlertListParams, context.query);
      return alerts.overview(accessOf(context), query.connectionId);
    });
}
