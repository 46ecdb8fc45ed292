/**
 * A shard in the front's own thread, behind a MessageChannel: every message is cloned (and
 * buffers transferred) exactly as to a worker thread, so the test app exercises the same
 * protocol, merges and ordering as the service, without a thread per shard. Terminating it
 * closes the channel, which ends it as a crash ends a worker.
 */
import { ShardHost, type ShardRuntimeFactory } from './shard-host.ts';
import type { ShardChannel } from './shard-link.ts';
import type { ShardPort } from './shard-protocol.ts';

type ClosablePort = ShardPort & { start(): void; close(): void; unref?: () => void };

export function inProcessChannel(factory: ShardRuntimeFactory, docsBase: string): ShardChannel {
  const { port1, port2 } = new MessageChannel();
  const front = port1 as unknown as ClosablePort;
  const shard = port2 as unknown as ClosablePort;
  new ShardHost(shard, factory, docsBase);
  for (const port of [front, shard]) {
    port.start();
    // a test process ends when its tests do, whatever channels are left open
    port.unref?.();
  }
  const ended = Promise.withResolvers<string>();
  return {
    port: front,
    ended: ended.promise,
    terminate: async () => {
      front.close();
      shard.close();
      ended.resolve('terminated');
    },
  };
}
