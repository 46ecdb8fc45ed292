import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import { ACK_REASON_CHARS_MAX, ackCommands, pendingCommands, reportCapabilities, type AckOutcome } from '../../actors/services/agent-service.ts';
import { COMMAND_TYPES } from '../../actors/connection/command-types.ts';
import { FRAMEWORKS } from '../../actors/ingest/states.ts';
import { literals } from './list-params.ts';
import { connectionActorForKey } from '../../actors/services/ingest-service.ts';
import { DomainError, validationError } from '../../actors/domain-error.ts';
import type { ControlSupport } from '../../actors/connection/agent-capabilities.ts';
import type { AppDeps } from '../app-deps.ts';
import { bearerToken } from '../http/api-key.ts';
import type { InFlightLimiter } from '../http/in-flight.ts';
import { admittedBytes, bodyReader } from '../http/read-body.ts';
import { model, validBody, validQuery } from '../http/validate.ts';

const ACK_IDS_MAX = 1000;
const CommandId = Type.String({ minLength: 1, maxLength: 64 });
export const CommandsParams = model(Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }) }));
/** Limits on what an agent may report beside an outcome: a few named figures or words. */
export const DETAILS_LIMITS = { keysMax: 16, keyChars: 64, textChars: 200 } as const;
const Details = Type.Record(
  Type.String({ maxLength: DETAILS_LIMITS.keyChars }),
  Type.Union([Type.Number(), Type.String({ maxLength: DETAILS_LIMITS.textChars }), Type.Boolean(), Type.Null()]),
  { maxProperties: DETAILS_LIMITS.keysMax, description: 'a few named figures or words, e.g. `{"removed": 1204}`' },
);

/** `ids` were carried out; `outcomes` say so per command (done, failed, unsupported), with a reason when one was not. */
export const AckBody = model(
  Type.Object({
    ids: Type.Optional(Type.Array(CommandId, { minItems: 1, maxItems: ACK_IDS_MAX })),
    outcomes: Type.Optional(
      Type.Array(
        Type.Object({
          id: CommandId,
          status: literals(['done', 'failed', 'unsupported'] as const),
          reason: Type.Optional(Type.Union([Type.String({ maxLength: ACK_REASON_CHARS_MAX }), Type.Null()])),
          details: Type.Optional(Details),
        }),
        { minItems: 1, maxItems: ACK_IDS_MAX },
      ),
    ),
  }),
);

/** What an agent reports it can do, at its start: one entry per command type it knows. */
export const CapabilitiesBody = model(
  Type.Object(
    {
      framework: literals(FRAMEWORKS),
      agentVersion: Type.String({ minLength: 1, maxLength: 64 }),
      controls: Type.Record(
        Type.String({ maxLength: 64 }),
        Type.Object({
          supported: Type.Boolean(),
          reason: Type.Optional(Type.Union([Type.String({ maxLength: ACK_REASON_CHARS_MAX }), Type.Null()], { description: 'why not; required when not supported' })),
        }),
        { maxProperties: 64, description: 'command type -> whether the agent carries it out, and why not; types this service does not know are ignored' },
      ),
    },
    { additionalProperties: false },
  ),
);
const CAPABILITIES_BODY_BYTES_MAX = 128 * 1024;
const KNOWN_TYPES: ReadonlySet<string> = new Set(COMMAND_TYPES);

/** The report's entries for the types this service knows, as kept: `{supported: true}`, or `{supported: false, reason}` (a reason is required). */
function knownControls(controls: Record<string, { supported: boolean; reason?: string | null }>): Record<string, ControlSupport> {
  const kept: Record<string, ControlSupport> = {};
  for (const [type, { supported, reason }] of Object.entries(controls)) {
    if (!KNOWN_TYPES.has(type)) continue;
    if (supported) kept[type] = { supported: true };
    else if (typeof reason === 'string' && reason.trim() !== '') kept[type] = { supported: false, reason };
    else throw validationError(`controls.${type}.reason`, 'a control that is not supported says why');
  }
  return kept;
}
/** 1,000 ids of up to 64 characters fit easily; an agent reporting long reasons sends fewer outcomes per request */
const ACK_BODY_BYTES_MAX = 128 * 1024;

/** An agent inside the job system polls the commands of its connection and acknowledges what it carried out. */
export function agentRoutes(deps: AppDeps, inFlight: InFlightLimiter) {
  const { engine } = deps;
  const body = bodyReader(deps);
  return new Elysia({ name: 'agent' })
    // An agent given only the key learns which connection its events must name.
    .get('/api/agent/connection', ({ request }) => ({ connectionId: connectionActorForKey(engine, bearerToken(request)).connectionId }))
    .get('/api/agent/commands', ({ request, query }) => {
      const actor = connectionActorForKey(engine, bearerToken(request));
      const { limit } = validQuery(CommandsParams, query);
      return { data: pendingCommands(actor, limit) };
    })
    .post(
      '/api/agent/commands/ack',
      async ({ request }) => {
        const actor = connectionActorForKey(engine, bearerToken(request)); // before the body is read
        const ticket = inFlight.admit(actor.connectionId, admittedBytes(request, ACK_BODY_BYTES_MAX));
        let parsed: unknown;
        try {
          parsed = await body.jsonWatched(request, ACK_BODY_BYTES_MAX, [ticket]);
        } finally {
          ticket.release(); // nothing after the body holds more than its answer
        }
        const { ids = [], outcomes = [] } = validBody(AckBody, parsed);
        if (ids.length + outcomes.length === 0) {
          throw new DomainError('VALIDATION_ERROR', 'invalid ids', { ids: ['ids or outcomes must list at least one command'] });
        }
        if (ids.length + outcomes.length > ACK_IDS_MAX) {
          throw new DomainError('VALIDATION_ERROR', 'invalid ids', { ids: [`ids and outcomes together must list at most ${ACK_IDS_MAX} commands`] });
        }
        const all: AckOutcome[] = [...ids.map((id) => ({ id, status: 'done' as const, reason: null })), ...outcomes.map((o) => ({ ...o, reason: o.reason ?? null }))];
        return ackCommands(engine, actor, all);
      },
      { parse: 'none' },
    )
    // an agent says at its start what it can do; the dashboard disables what it cannot, with its reason
    .put(
      '/api/agent/capabilities',
      async ({ request }) => {
        const actor = connectionActorForKey(engine, bearerToken(request));
        const ticket = inFlight.admit(actor.connectionId, admittedBytes(request, CAPABILITIES_BODY_BYTES_MAX));
        let parsed: unknown;
        try {
          parsed = await body.jsonWatched(request, CAPABILITIES_BODY_BYTES_MAX, [ticket]);
        } finally {
          ticket.release();
        }
        const report = validBody(CapabilitiesBody, parsed);
        return reportCapabilities(engine, actor, { framework: report.framework, agentVersion: report.agentVersion, controls: knownControls(report.controls) });
      },
      { parse: 'none' },
    );
}
