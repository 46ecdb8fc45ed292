import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import type { AppDeps } from '../app-deps.ts';
import { accessOf } from '../http/access-guard.ts';
import { model, validQuery } from '../http/validate.ts';
import { limitParam, literals } from './list-params.ts';

export const AuditListParams = model(
  Type.Object({
    teamId: Type.Optional(Type.String({ maxLength: 64 })),
    userId: Type.Optional(Type.String({ maxLength: 64 })),
    action: Type.Optional(Type.String({ maxLength: 64, description: 'an audit action, e.g. `job.revoke` (docs/security.md lists them)' })),
    outcome: Type.Optional(literals(['success', 'denied', 'failed'] as const)),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    limit: limitParam(),
  }),
);

/** GET /api/audit: the audit log, newest first, for the instance admin and team admins. */
export function auditRoutes({ audit }: AppDeps) {
  // Stryker disable next-line ObjectLiteral,StringLiteral: the name only skips a repeated registration
  return new Elysia({ name: 'audit' }).get('/api/audit', (context) => audit.list(accessOf(context), validQuery(AuditListParams, context.query)));
}
