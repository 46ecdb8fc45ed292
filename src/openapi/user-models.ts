/** Models of the users answers (see response-models.ts for why closed, and the `same` checks). */
import { Type, type Static } from '@sinclair/typebox';
import { ROLES } from '../../actors/accounts/roles.ts';
import type { UserSummary as UserSummaryView } from '../../actors/services/user-service.ts';
import type { PublicAuditEntry } from '../../actors/services/audit-service.ts';
import { literals } from '../routes/list-params.ts';
import { closed, nullable, same, time } from './response-models.ts';

export const UserSummary = closed({
  id: Type.String(),
  email: Type.String(),
  isAdmin: Type.Boolean({ description: 'the instance admin' }),
  createdAt: time(),
  status: literals(['active', 'invited', 'disabled'] as const, { description: '`invited`: has no password yet; `disabled`: may not sign in' }),
  teams: Type.Array(closed({ id: Type.String(), name: Type.String(), role: literals(ROLES) })),
});
export const UserList = closed({ data: Type.Array(UserSummary, { description: 'oldest first' }) });
export const UserReply = closed({ user: UserSummary });

export const PasswordLink = closed({
  url: Type.String({ description: 'the page that sets the password, the single-use token after `#token=`; under PUBLIC_URL when set, else the address this request reached' }),
  purpose: literals(['invite', 'reset'] as const),
  expiresAt: time('after PASSWORD_LINK_HOURS'),
});
export const CreatedUser = closed({ user: UserSummary, invite: nullable(PasswordLink) });

export const AuditEntry = closed({
  id: Type.String(),
  at: time(),
  userId: nullable(Type.String({ description: 'null: nobody signed in (a failed sign-in)' })),
  email: Type.String({ description: "the user's email then, or the one a sign-in named" }),
  address: Type.String({ description: 'the client address' }),
  action: Type.String({ description: 'the route\'s audit action (docs/security.md, the role matrix)' }),
  target: nullable(Type.String({ description: 'what it was done to: an id, or a summary such as `3 jobs`' })),
  teamId: nullable(Type.String()),
  connectionId: nullable(Type.String()),
  outcome: literals(['success', 'denied', 'failed'] as const, { description: '`denied`: 401 or 403; `failed`: any other refusal' }),
  status: Type.Integer({ description: 'the HTTP status answered' }),
  error: nullable(Type.String({ description: 'the error code and message of a refusal' })),
});
export const AuditPage = closed({
  data: Type.Array(AuditEntry, { description: 'newest first' }),
  pagination: closed({ nextCursor: nullable(Type.String({ description: 'pass as `cursor` for the next page; null: no more' })), limit: Type.Integer({ minimum: 1 }) }),
});

same<UserSummaryView, Static<typeof UserSummary>>(true);
same<PublicAuditEntry, Static<typeof AuditEntry>>(true);
