/**
 * The session-token key must be the same on every node, or a session made on one node
 * would be refused by the next owner after a failover. Without SESSION_SECRET it lives
 * in a key-value bucket: the first node creates it (create-if-absent), every other node
 * and every restart reads the one that won.
 */
import type { KV } from '@nats-io/kv';
import { newSessionSecret } from '../actors/accounts/secrets.ts';
import { isWrongLastSequence } from './nats-errors.ts';

const SESSION_SECRET_KEY = 'session';

export async function sharedSessionSecret(secrets: KV): Promise<string> {
  try {
    await secrets.create(SESSION_SECRET_KEY, newSessionSecret());
  } catch (error) {
    // Refused because another node (or an earlier start) made it first: read that one below.
    if (!isWrongLastSequence(error)) throw error;
  }
  const entry = await secrets.get(SESSION_SECRET_KEY);
  if (entry === null || entry.operation !== 'PUT' || entry.string().length < 16) {
    throw new Error(`the ${SESSION_SECRET_KEY} key of the secrets bucket holds no session secret; set SESSION_SECRET or delete the key`);
  }
  return entry.string();
}
