/** Models of the users answers (see response-models.ts for why closed, and the `same` checks). */
import { Type, type Static } from '@sinclair/typebox';
import { ROLES } from '../../actors/accounts/roles.ts';
import type { UserSummary as UserSummaryView } from '../../actors/services/user-service.ts';
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

same<UserSummaryView, Static<typeof UserSummary>>(true);
