/** Models of the teams and members answers (see response-models.ts for why closed, and the `same` checks). */
import { Type, type Static } from '@sinclair/typebox';
import { ROLES } from '../../actors/accounts/roles.ts';
import type { PublicMember, PublicTeam } from '../../actors/services/team-service.ts';
import { literals } from '../routes/list-params.ts';
import { closed, Connection, same, time, User } from './response-models.ts';

export const Role = literals(ROLES, { description: 'viewer: reads and the live stream; operator: also revoke and retry; admin: also connections, keys, alert rules and channels, members' });

export const Team = closed({
  id: Type.String(),
  name: Type.String(),
  createdAt: time(),
  role: Type.Union([literals(ROLES), Type.Null()], { description: "the signed-in user's role in the team; null: not a member (the instance admin sees every team, and reads a team's data only as its member)" }),
  members: Type.Integer({ minimum: 0 }),
  connections: Type.Integer({ minimum: 0 }),
});
export const TeamReply = closed({ team: Team });
export const TeamList = closed({ data: Type.Array(Team) });

export const Member = closed({
  userId: Type.String(),
  email: Type.String(),
  role: Role,
  since: time('when the user joined the team'),
  disabled: Type.Boolean({ description: 'the user may not sign in' }),
});
export const MemberReply = closed({ member: Member });
export const MemberList = closed({ data: Type.Array(Member, { description: 'in the order they joined' }) });

export const Me = closed({
  user: User,
  teams: Type.Array(Team, { description: "the user's teams and their role in each; none: the user sees no data until an admin adds them to a team" }),
  connections: Type.Array(Connection),
});

same<PublicTeam, Static<typeof Team>>(true);
same<PublicMember, Static<typeof Member>>(true);
