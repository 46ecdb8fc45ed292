/**
 * Who writes a partition, as this node sees it, and a short wait for that view to settle.
 * Right after nodes start, and during a handover, the leases move for a moment: the lease
 * names a node that is still catching up, or nobody while one node released it and the next
 * has not written it yet. A request that arrives then waits here (bounded) for the writer to
 * be known, instead of handing the client a 503 to retry: a node that was forwarded a write
 * because it just took the lease answers it once it writes, and a node that sees the
 * partition moving forwards it once the new writer holds the lease.
 */
/** Longest a request waits for its partition's writer to be known; then it is answered 503 as before. */
export const WRITER_SETTLE_WAIT_MS = 2_000;
const WRITER_SETTLE_POLL_MS = 20;

/** The holder of a partition's lease as the node's watch of the leases shows it (cluster/lease.ts). */
type LeaseHolder = { node: string; url: string } | null;

export type WriterView =
  /** this node writes the partition */
  | { kind: 'here' }
  /** another node holds the lease */
  | { kind: 'elsewhere'; holder: NonNullable<LeaseHolder> }
  /** this node holds the lease and is still catching up with the log */
  | { kind: 'taking-over' }
  /** nobody holds the lease (released, not taken yet) */
  | { kind: 'moving' };

export interface PartitionView {
  writing(key: string): boolean;
  ownerOf(key: string): LeaseHolder;
}

export function writerView(view: PartitionView, nodeId: string, key: string): WriterView {
  if (view.writing(key)) return { kind: 'here' };
  const holder = view.ownerOf(key);
  if (holder === null || holder.url === '') return { kind: 'moving' };
  if (holder.node === nodeId) return { kind: 'taking-over' };
  return { kind: 'elsewhere', holder };
}

/**
 * The view once a writer is known (here or elsewhere), or as it stands after `waitMs`.
 * `refusedBy`: a node that has just refused the partition's writes counts as not known.
 */
export async function settledWriterView(view: PartitionView, nodeId: string, key: string, waitMs = WRITER_SETTLE_WAIT_MS, refusedBy?: string): Promise<WriterView> {
  const deadline = performance.now() + waitMs;
  for (;;) {
    const now = writerView(view, nodeId, key);
    const known = now.kind === 'here' || (now.kind === 'elsewhere' && now.holder.node !== refusedBy);
    if (known || performance.now() >= deadline) return now;
    await Bun.sleep(WRITER_SETTLE_POLL_MS);
  }
}

/** On a writer's 503 to a forwarded request: it does not write that partition (the forwarding node's view was older). */
export const NOT_WRITER_HEADER = 'x-jobwatch-not-writer';

/** Bodies up to this size are read before a forward, so the request can be sent once more if its writer refuses it. */
export const REPLAYABLE_BODY_BYTES_MAX = 64 * 1024;

/**
 * What a forward can be sent again with: `{ body: undefined }` for a request without a body,
 * its text for a small plain one (declared length within REPLAYABLE_BODY_BYTES_MAX, not
 * compressed), null for any other (a large upload streams through and is not replayed).
 */
export async function replayableBody(request: Request): Promise<{ body: string | undefined } | null> {
  if (request.body === null) return { body: undefined };
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (!Number.isSafeInteger(declared) || declared > REPLAYABLE_BODY_BYTES_MAX || request.headers.has('content-encoding')) return null;
  return { body: await request.text() };
}
