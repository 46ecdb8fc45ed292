/** What the OpenAPI document says about users and passwords (docs/security.md, "Users and passwords"). */
import { ChangePasswordBody, SetPasswordBody } from '../routes/auth.ts';
import { CreateUserBody } from '../routes/users.ts';
import { AuditListParams } from '../routes/audit.ts';
import { SsoStartParams } from '../routes/oidc.ts';
import { Type } from '@sinclair/typebox';
import type { OperationDoc } from './operations.ts';
import { UserReply as SignedInReply } from './response-models.ts';
import * as Reply from './user-models.ts';

const SIGN_IN_COOKIES = { 'Set-Cookie': 'the session cookie and the device cookie, as POST /api/auth/login sets them' };

export const USER_OPERATIONS: Record<string, OperationDoc> = {
  'GET /api/users': {
    tag: 'Users',
    summary: 'Every user, with their state and teams (the instance admin)',
    auth: 'session',
    success: { 200: { description: 'Oldest first', json: Reply.UserList } },
    errors: [],
  },
  'POST /api/users': {
    tag: 'Users',
    summary: 'Create a user, or invite one (the instance admin)',
    description:
      'With `password` (12 to 256 characters) the user can sign in at once. Without it the user is invited: the answer holds `invite.url`, ' +
      'a single-use link that sets their password and signs them in, good for PASSWORD_LINK_HOURS; give it to them through a safe channel. ' +
      '`teamId` (and `role`, default viewer) adds them to a team at once. 409 `CONFLICT` for a taken email, or when 1,000 links are waiting.',
    auth: 'session',
    body: CreateUserBody.schema,
    success: { 201: { description: 'Created; `invite` is null when a password was given', json: Reply.CreatedUser } },
    errors: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
  },
  'POST /api/users/:id/disable': {
    tag: 'Users',
    summary: 'Disable a user: their sessions and live streams end at once, and they cannot sign in (the instance admin)',
    description: 'Nobody disables themselves, nor the last instance admin who may sign in (409 `CONFLICT`). Their teams and roles are kept for when they are enabled.',
    auth: 'session',
    success: { 200: { description: 'Disabled', json: Reply.UserReply } },
    errors: ['NOT_FOUND', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
  },
  'POST /api/users/:id/enable': {
    tag: 'Users',
    summary: 'Enable a disabled user (the instance admin)',
    auth: 'session',
    success: { 200: { description: 'Enabled', json: Reply.UserReply } },
    errors: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  },
  'DELETE /api/users/:id': {
    tag: 'Users',
    summary: 'Remove a user: their sessions, live streams, memberships and password link end at once (the instance admin)',
    description: 'What they did stays in the audit log under their email. Nobody removes themselves, nor the last instance admin (409 `CONFLICT`).',
    auth: 'session',
    success: { 204: { description: 'Removed' } },
    errors: ['NOT_FOUND', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
  },
  'POST /api/users/:id/password-reset': {
    tag: 'Users',
    summary: 'A single-use link that sets a new password (the instance admin)',
    description: 'Any earlier link of the user stops working. The old password works until the link is used; using it ends every session of the user.',
    auth: 'session',
    success: { 200: { description: 'The link, shown this once', json: Reply.PasswordLink } },
    errors: ['NOT_FOUND', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
  },
  'GET /api/audit': {
    tag: 'Users',
    summary: 'The audit log: who did what, when, from where, on what, and the outcome',
    description:
      'Newest first, in cursor pages. The instance admin reads every entry; an admin of a team the entries of their teams (sign-ins and user changes, ' +
      'which belong to no team, only the instance admin). Filters: `teamId`, `userId`, `action`, `outcome`. Kept AUDIT_RETENTION_DAYS, at most AUDIT_ENTRIES_MAX.',
    auth: 'session',
    query: Type.Partial(AuditListParams.schema),
    success: { 200: { description: 'A page of entries', json: Reply.AuditPage } },
    errors: ['VALIDATION_ERROR'],
  },
  'GET /api/auth/methods': {
    tag: 'Auth',
    summary: 'The ways to sign in here: a password, single sign-on, or both',
    auth: 'none',
    success: { 200: { description: 'What the sign-in page offers', json: Type.Object({ password: Type.Boolean(), sso: Type.Boolean() }, { additionalProperties: false }) } },
    errors: [],
  },
  'GET /api/auth/oidc/start': {
    tag: 'Auth',
    summary: 'Single sign-on: a redirect to the identity provider',
    description:
      'A browser navigation. Sets a short-lived cookie (`sso_state`, 10 minutes, sent only to the callback) holding the state, nonce and PKCE verifier, signed by the service. ' +
      '404 when single sign-on is not set up (OIDC_ISSUER); 503 when the provider cannot be reached.',
    auth: 'none',
    query: Type.Partial(SsoStartParams.schema),
    success: { 302: { description: "To the provider's authorization page", headers: { Location: "the provider's authorization address", 'Set-Cookie': '`sso_state=...; HttpOnly; SameSite=Lax; Path=/api/auth/oidc/callback`' } } },
    errors: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  },
  'GET /api/auth/oidc/callback': {
    tag: 'Auth',
    summary: "Single sign-on: where the provider sends the browser back",
    description:
      'The state must be the one this browser started (and not used before), the code is exchanged with the PKCE verifier, and the ID token is verified ' +
      "(signature from the provider's keys, issuer, audience, expiry, nonce). Then the user is found, linked or made, and their roles in the teams OIDC_GROUP_MAP " +
      'names follow their groups. Answers are redirects: to the page the sign-in started from, signed in (the same session cookie as a password sign-in); ' +
      'to `/no-access` when their groups give them no team; to `/signin?sso=<state|provider|token|unavailable|refused>&reason=...` when anything was refused, ' +
      'with nothing signed in. Every outcome is in the audit log (`auth.sso`).',
    auth: 'none',
    success: { 302: { description: 'On to the dashboard, the no-access page, or the sign-in page with the reason', headers: { Location: 'where the browser goes next', 'Set-Cookie': 'on success, the session and device cookies' } } },
    errors: ['NOT_FOUND'],
  },
  'POST /api/auth/password': {
    tag: 'Auth',
    summary: 'Change your own password',
    description:
      '`currentPassword` is checked (a wrong one is 400 naming it, counted by the login throttle: 429 `RATE_LIMITED` past it). Every other session of yours ends; this one goes on.',
    auth: 'session',
    body: ChangePasswordBody.schema,
    success: { 204: { description: 'Changed' } },
    errors: ['VALIDATION_ERROR', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
  },
  'POST /api/auth/set-password': {
    tag: 'Auth',
    summary: 'Set a password with an invitation or reset link, and sign in',
    description: 'The link is used up; every other session of the user ends. A link used, replaced by a newer one or expired is 404.',
    auth: 'none',
    body: SetPasswordBody.schema,
    success: { 200: { description: 'Set and signed in', json: SignedInReply, headers: SIGN_IN_COOKIES } },
    errors: ['VALIDATION_ERROR', 'NOT_FOUND', 'FORBIDDEN', 'SERVICE_UNAVAILABLE'],
  },
};
