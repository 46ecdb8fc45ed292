/**
 * After a recovery from a snapshot the job indexes are built on first use (job-store.ts), so
 * the service answers sooner; the rest are built here, one index per timer turn, so
 * requests are answered between them (a request that needs one builds it itself).
 */
import type { Engine } from '../../actors/engine.ts';

/** How long after listening the remaining indexes start to be built: the first requests after a restart come first. */
const INDEX_BUILD_DELAY_MS = 1_000;

export async function buildIndexesBetweenRequests(engine: Engine): Promise<void> {
  const turn = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());
  await turn(INDEX_BUILD_DELAY_MS);
  for (const id of [...engine.connectionIds()]) {
    while (engine.connection(id)?.jobs.buildNextIndex() === true) await turn(1);
  }
}
