/**
 * A shard on a worker thread of its own: started with its `init`, ended by an uncaught
 * error (the worker then closes) or by the front. `ended` resolves when the thread is gone,
 * so a restarted shard never shares its store with the one before it.
 */
import type { ShardChannel } from './shard-link.ts';
import type { ShardPort } from './shard-protocol.ts';
import type { ShardWorkerInit } from './worker-init.ts';

export function workerChannel(init: ShardWorkerInit): ShardChannel {
  const worker = new Worker(new URL('./shard-worker.ts', import.meta.url).href);
  const closed = Promise.withResolvers<void>();
  const ended = Promise.withResolvers<string>();
  let why = 'its thread ended';
  worker.addEventListener('error', (event) => {
    why = `an uncaught error: ${(event as ErrorEvent).message}`;
  });
  worker.addEventListener('close', () => {
    closed.resolve();
    ended.resolve(why);
  });
  worker.postMessage(init);
  return {
    port: worker as unknown as ShardPort,
    ended: ended.promise,
    terminate: async () => {
      worker.terminate();
      await closed.promise;
    },
  };
}
