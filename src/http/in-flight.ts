/**
 * What one connection (API key) may have in flight at once: requests whose body is being
 * read or worked on, and the bytes of those bodies. Without a cap a client with a valid
 * key holds memory per socket for as long as the body deadline allows: 150 sockets each
 * trickling a 5 MB body took the service from 106 to 867 MB. Past either cap the request
 * is answered 429 `RATE_LIMITED` with `Retry-After` at once, its body unread (README
 * "Security" > "HTTP edge"; IN_FLIGHT_REQUESTS_PER_CONNECTION, IN_FLIGHT_MB_PER_CONNECTION).
 *
 * A body's declared length is charged when the request is admitted; a body without one
 * (chunked) is charged as its chunks arrive. Everything is given back when the request is
 * answered, whichever way.
 */
import { DomainError } from '../../actors/domain-error.ts';

export interface InFlightLimits {
  requestsMax: number;
  bytesMax: number;
}

export const IN_FLIGHT_DEFAULTS: InFlightLimits = {
  /** above the 16 senders of one connection the soak test keeps going, plus its agent */
  requestsMax: 32,
  /** a dozen bodies of the largest size (5 MiB) */
  bytesMax: 64 * 1024 * 1024,
};

/** A request past a cap can retry as soon as one of the others is answered. */
const RETRY_AFTER_SECONDS = 1;

interface Usage {
  requests: number;
  bytes: number;
}

export class InFlightLimiter {
  private readonly byConnection = new Map<string, Usage>();

  constructor(readonly limits: InFlightLimits = IN_FLIGHT_DEFAULTS) {}

  /**
   * Admits a request of `connectionId` with its declared body length (null when it has
   * none), or throws the 429. The caller must `release` the ticket when it answered.
   */
  admit(connectionId: string, declaredBytes: number | null): InFlightTicket {
    const usage = this.byConnection.get(connectionId) ?? { requests: 0, bytes: 0 };
    if (usage.requests >= this.limits.requestsMax) {
      throw rateLimited(`${usage.requests} requests of this connection are in flight, the most allowed at once is ${this.limits.requestsMax}`);
    }
    const charged = declaredBytes ?? 0;
    refuseBytesPast(usage, charged, this.limits.bytesMax);
    usage.requests++;
    usage.bytes += charged;
    this.byConnection.set(connectionId, usage);
    return new InFlightTicket(this, connectionId, usage, charged);
  }

  /** Requests and bytes in flight for a connection now (for tests and diagnostics). */
  usage(connectionId: string): Usage {
    const usage = this.byConnection.get(connectionId);
    return { requests: usage?.requests ?? 0, bytes: usage?.bytes ?? 0 };
  }

  /** @internal the ticket's */
  charge(usage: Usage, bytes: number): void {
    refuseBytesPast(usage, bytes, this.limits.bytesMax);
    usage.bytes += bytes;
  }

  /** @internal the ticket's */
  giveBack(connectionId: string, usage: Usage, bytes: number): void {
    usage.requests--;
    usage.bytes -= bytes;
    if (usage.requests === 0) this.byConnection.delete(connectionId);
  }
}

/** One admitted request; as a body watcher (read-body.ts) it charges chunks past the declared length. */
export class InFlightTicket {
  private received = 0;
  private released = false;

  constructor(
    private readonly limiter: InFlightLimiter,
    private readonly connectionId: string,
    private readonly usage: Usage,
    private charged: number,
  ) {}

  feed(chunk: Uint8Array): void {
    this.received += chunk.byteLength;
    if (this.received <= this.charged) return;
    this.limiter.charge(this.usage, this.received - this.charged);
    this.charged = this.received;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.limiter.giveBack(this.connectionId, this.usage, this.charged);
  }
}

function refuseBytesPast(usage: Usage, more: number, bytesMax: number): void {
  if (usage.bytes + more <= bytesMax) return;
  throw rateLimited(`the bodies of this connection's requests in flight would exceed ${bytesMax} bytes`);
}

function rateLimited(problem: string): DomainError {
  return new DomainError(
    'RATE_LIMITED',
    `too much in flight for this connection: ${problem}; retry when an earlier request has been answered`,
    { connection: [problem] },
    undefined,
    { 'Retry-After': String(RETRY_AFTER_SECONDS), connection: 'close' },
  );
}
