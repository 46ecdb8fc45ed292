/**
 * A data directory that once held accounts never gets a fresh admin: the manifest keeps
 * the mark `accounts` from the first user on (persistence/data-dir-manifest.ts), and a
 * recovery that finds no user under that mark stops the start. Without it, a snapshot whose
 * accounts were lost, or log segments gone, came up as a new installation: a new admin with
 * a one-time password, and the next snapshot made the loss permanent.
 */
import type { Engine } from '../actors/engine.ts';
import { RecoveryRefusedError, type DurableStore } from '../persistence/durable-store.ts';
import type { LogLine } from './logging/log-line.ts';

export const ACCOUNTS_MARK = 'accounts';

/**
 * After recovery: refuses a directory marked as having held accounts that recovered none;
 * marks one that holds users (an older version's directory), and marks as soon as the
 * first user is durable.
 */
export async function keepAccountsMark(engine: Engine, store: Required<Pick<DurableStore, 'mark'>>, marks: readonly string[], dataDir: string, log: LogLine): Promise<void> {
  const problem = lostAccountsProblem(engine, marks);
  if (problem !== null) {
    throw new RecoveryRefusedError(
      `refusing to start from data directory ${dataDir}: ${problem}. To start: restore the data directory from a backup ` +
        '(`npm run cli -- verify` says what it holds); to start over as a new installation, move the whole directory aside. No admin was created.',
    );
  }
  if (marks.includes(ACCOUNTS_MARK)) return;
  let marking: Promise<void> | null = null;
  const markOnce = (): void => {
    if (marking !== null || engine.accounts.users.size === 0) return;
    marking = store.mark(ACCOUNTS_MARK).catch((error: unknown) => {
      marking = null; // the next change of accounts tries again
      log(`keeping the mark that this data directory holds accounts failed: ${error instanceof Error ? error.message : String(error)}`, { severity: 'error' });
    });
  };
  engine.listen({ accountsChanged: markOnce });
  markOnce();
  await marking;
}

/** Why the recovered state cannot be the directory's (its accounts are gone), or null. */
export function lostAccountsProblem(engine: Engine, marks: readonly string[]): string | null {
  if (!marks.includes(ACCOUNTS_MARK) || engine.accounts.users.size > 0) return null;
  return (
    `it held accounts (its manifest.json is marked '${ACCOUNTS_MARK}'), but recovery found no user: ` +
    'the snapshot or log segments that held them are gone or were emptied'
  );
}
