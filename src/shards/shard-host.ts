/**
 * A shard's end of its port: the same code in a worker thread (shard-worker.ts) and in the
 * test app's in-process shards. On `start` it builds its runtime (the engine of its
 * connections with the front's accounts, recovered from its own log, and the application
 * over it, see shard-runtime.ts) and says `ready`; from then on it answers the front's
 * requests with that application, applies the accounts records the front commits, and
 * feeds the front's live stream. Messages that arrive while it starts wait, in order.
 */
import type { SnapshotChunk } from '../../actors/engine-snapshot.ts';
import type { EngineRecord } from '../../actors/engine.ts';
import { describeError } from '../../persistence/errors.ts';
import { vouchForClient } from '../http/client-address.ts';
import { errorResponse } from '../http/error-envelope.ts';
import type { FromShard, ShardCall, ShardPort, ShardRecoverySummary, ToShard } from './shard-protocol.ts';

/** What a started shard is made of (shard-runtime.ts builds it). */
export interface ShardRuntime {
  readonly recovery: ShardRecoverySummary;
  /** the application over the shard's engine */
  handle(request: Request): Promise<Response>;
  /** an accounts record the front committed */
  applyAccounts(record: EngineRecord): void;
  watch(connectionIds: readonly string[], ack: number): void;
  unwatch(connectionId: string, graceUntilMs: number): void;
  announceOfflineWorkers(): void;
  call(call: ShardCall): Promise<unknown>;
}

/** Builds the runtime once the front sent the accounts; `send` reaches the front (halts, log lines, live events). */
export type ShardRuntimeFactory = (accounts: SnapshotChunk[], send: (message: FromShard, transfer?: ArrayBuffer[]) => void) => Promise<ShardRuntime>;

export class ShardHost {
  private runtime: ShardRuntime | undefined;
  private starting = false;
  /** what arrived before the runtime was built, in order */
  private waiting: ToShard[] = [];
  /** the bodies of requests being answered, fed by `body` messages */
  private readonly bodies = new Map<number, ReadableStreamDefaultController<Uint8Array>>();

  constructor(
    private readonly port: ShardPort,
    private readonly factory: ShardRuntimeFactory,
    private readonly docsBase: string,
  ) {
    port.addEventListener('message', (event) => this.receive(event.data as ToShard));
  }

  private send(message: FromShard, transfer?: ArrayBuffer[]): void {
    this.port.postMessage(message, transfer);
  }

  private receive(message: ToShard): void {
    if (message.t === 'start') return void this.start(message.accounts);
    if (this.runtime === undefined) {
      this.waiting.push(message);
      return;
    }
    this.apply(this.runtime, message);
  }

  private async start(accounts: SnapshotChunk[]): Promise<void> {
    if (this.starting) return;
    this.starting = true;
    let runtime: ShardRuntime;
    try {
      runtime = await this.factory(accounts, (message, transfer) => this.send(message, transfer));
    } catch (error) {
      // the front restarts a shard that cannot start, after a pause
      this.send({ t: 'halted', message: `could not start: ${describeError(error)}` });
      return;
    }
    for (const message of this.waiting) this.apply(runtime, message);
    this.waiting = [];
    this.runtime = runtime;
    this.send({ t: 'ready', recovery: runtime.recovery });
  }

  private apply(runtime: ShardRuntime, message: ToShard): void {
    switch (message.t) {
      case 'accounts':
        runtime.applyAccounts(message.record);
        return this.send({ t: 'applied', ack: message.ack });
      case 'request':
        return void this.answer(runtime, message);
      case 'body':
        return this.bodies.get(message.id)?.enqueue(message.chunk);
      case 'bodyEnd':
        this.bodies.get(message.id)?.close();
        this.bodies.delete(message.id);
        return;
      case 'bodyAbort':
        this.bodies.get(message.id)?.error(new Error(message.reason));
        this.bodies.delete(message.id);
        return;
      case 'watch':
        return runtime.watch(message.connectionIds, message.ack);
      case 'unwatch':
        return runtime.unwatch(message.connectionId, message.graceUntilMs);
      case 'announceOffline':
        return runtime.announceOfflineWorkers();
      case 'call':
        return void runtime.call(message.call).then(
          (value) => this.send({ t: 'reply', id: message.id, value }),
          (error: unknown) => this.send({ t: 'reply', id: message.id, error: describeError(error) }),
        );
      case 'start':
        return;
    }
  }

  private async answer(runtime: ShardRuntime, message: Extract<ToShard, { t: 'request' }>): Promise<void> {
    const { id } = message;
    let body: ReadableStream<Uint8Array> | undefined;
    if (message.hasBody) {
      body = new ReadableStream<Uint8Array>(
        {
          start: (controller) => void this.bodies.set(id, controller),
          pull: () => this.send({ t: 'bodyPull', id }),
          // the route answered before the body's end (a cap, a refusal): the front stops sending it
          cancel: () => {
            if (this.bodies.delete(id)) this.send({ t: 'bodyCancel', id });
          },
        },
        // nothing is asked for before the route reads
        { highWaterMark: 0 },
      );
    }
    let response: Response;
    try {
      const request = new Request(message.url, { method: message.method, headers: message.headers, body, duplex: 'half' } as RequestInit);
      vouchForClient(request, message.client);
      response = await runtime.handle(request);
    } catch (error) {
      // the application answers every error itself; this is for a request it could not even be given
      response = errorResponse(this.docsBase, { code: 'INTERNAL_ERROR', message: `internal error (${describeError(error)})` });
    }
    const bytes = await response.arrayBuffer();
    // answered before the body's end (a refusal before reading it): the front stops sending it
    if (this.bodies.delete(id)) this.send({ t: 'bodyCancel', id });
    this.send({ t: 'response', id, status: response.status, headers: [...response.headers], body: bytes }, [bytes]);
  }
}
