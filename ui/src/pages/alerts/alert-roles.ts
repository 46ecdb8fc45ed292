/** Alert rules and channels are changed by the admins of their connection's team; everyone else of the team reads them. */
import { whyNotOnConnection } from '../../lib/roles.ts';
import { connections } from '../../session.ts';

export const NOT_AN_ADMIN = 'Only an admin of a team creates alert rules and channels for its connections; you are not an admin in any of your teams.';

/** The connections whose rules and channels the user may change. */
export const adminConnections = () => connections.value.filter((connection) => connection.role === 'admin');

/** Why the user may not change a rule or channel of this connection, or null. */
export const whyNotChange = (connectionId: string): string | null => whyNotOnConnection(connectionId, 'admin', 'change alert rules and channels');
