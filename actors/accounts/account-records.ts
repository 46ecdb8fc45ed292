/** Log records that change accounts: users, sessions, connections and their keys. */
export interface User {
  id: string;
  email: string;
  passwordHash: string;
  isAdmin: boolean;
  createdAtMs: number;
}

export interface Session {
  tokenHash: string;
  userId: string;
  createdAtMs: number;
  expiresAtMs: number;
}

export interface Connection {
  id: string;
  name: string;
  ownerId: string;
  keyHash: string;
  keyPrefix: string;
  createdAtMs: number;
}

export type AccountsRecord =
  | { t: 'user.created'; user: User }
  | { t: 'session.created'; session: Session }
  | { t: 'session.deleted'; tokenHash: string }
  | { t: 'connection.created'; connection: Connection }
  | { t: 'connection.deleted'; connectionId: string };
