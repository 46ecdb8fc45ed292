/**
 * While a NATS server dies and its raft groups elect new leaders (about 7 s with
 * nats-server 2.9's defaults), JetStream answers "jetstream is not enabled" or nothing.
 * Steps that are safe to repeat ride that out instead of failing the node's start.
 */
import { RecoveryRefusedError, describeError } from '../persistence/errors.ts';

export const NATS_RETRY_FOR_MS = 30_000;

/** Thrown by our own code inside a retried step (e.g. the engine refusing a replayed record): repeating it cannot help. */
export class NotANatsFailure extends Error {
  override readonly name = 'NotANatsFailure';
}

export async function retryingWhileNatsRecovers<T>(what: string, step: () => Promise<T>, log: (line: string) => void): Promise<T> {
  const giveUpAtMs = performance.now() + NATS_RETRY_FOR_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      // A refusal is a verdict on the data, not a NATS hiccup.
      if (error instanceof RecoveryRefusedError || error instanceof NotANatsFailure || performance.now() >= giveUpAtMs) throw error;
      if (attempt === 1) log(`${what} failed (${describeError(error)}); retrying while NATS recovers`);
      await Bun.sleep(Math.min(1_000, 100 * attempt));
    }
  }
}
