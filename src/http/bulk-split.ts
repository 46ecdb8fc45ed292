/**
 * A bulk revoke or retry whose jobs belong to connections written in several places (the
 * partitions of several cluster nodes, or several shards): the ids are grouped by the
 * writer of their job's connection, each group goes out as a bulk action of its own, all
 * concurrently (answered here or forwarded), and the `results` are merged back in the
 * request's order. A group whose writer cannot be reached, or answers with an error, gives
 * `success: false` with that error for each of its ids. Ids nobody knows go with the first
 * group (every writer answers them not found); a bulk action naming no known job goes to
 * the fallback (the accounts writer, or the first shard of the user's).
 *
 * A body that is not a list of ids, or whose ids all go to one writer, is passed on whole,
 * unread, so the writer validates it and answers as it would anywhere.
 */
import { DomainError } from '../../actors/domain-error.ts';
import { describeError } from '../../persistence/errors.ts';
import { BULK_BODY_BYTES_MAX } from './read-body.ts';
import { textWithin } from './write-partition.ts';

export interface BulkPart {
  /** The original request (its headers and address); its body is not read when `body` is given. */
  request: Request;
  /** This part's body, `{"ids":[...]}`; undefined: the request's own body, unread. */
  body: string | undefined;
}

export interface BulkSplitOptions {
  /** Where each id's job is written (a partition's key, a shard), in the ids' order; undefined for a job nobody knows. */
  keysOf(ids: string[]): Promise<Array<string | undefined>>;
  /** Where a bulk action naming no known job, or a body that is not a list of ids, goes. */
  fallbackKey: string;
  /** Who writes `key` now: groups are made per writer. */
  writerOf(key: string): string | null;
  /** Sends a part to the writer of `key` (answered here when this node writes it). */
  answerPart(key: string, part: BulkPart): Promise<Response>;
}

type Result = { id: string; success: boolean; [field: string]: unknown };

export async function splitBulkByOwner(request: Request, options: BulkSplitOptions): Promise<Response> {
  // a length declared past the cap is refused by the writer before it reads a byte: nothing is read here either
  const ids = Number(request.headers.get('content-length') ?? 0) > BULK_BODY_BYTES_MAX ? null : await idsOf(request.clone() as Request);
  if (ids === null) return options.answerPart(options.fallbackKey, { request, body: undefined });
  const keys = await options.keysOf(ids);
  const groups = new Map<string, { key: string; ids: string[] }>();
  const unknown: string[] = [];
  ids.forEach((id, at) => {
    const key = keys[at];
    if (key === undefined) {
      unknown.push(id);
      return;
    }
    const writer = options.writerOf(key) ?? `nobody:${key}`;
    const group = groups.get(writer) ?? { key, ids: [] };
    group.ids.push(id);
    groups.set(writer, group);
  });
  const parts = [...groups.values()];
  if (parts.length === 0) parts.push({ key: options.fallbackKey, ids: [] });
  parts[0]!.ids.push(...unknown);
  if (parts.length === 1) return options.answerPart(parts[0]!.key, { request, body: undefined });
  const answers = await Promise.all(parts.map((part) => resultsOf(part.ids, () => options.answerPart(part.key, { request, body: JSON.stringify({ ids: part.ids }) }))));
  // a repeated id takes its results in order of appearance, as on one node
  const queues = new Map<string, Result[]>();
  for (const results of answers) for (const result of results) queues.set(result.id, [...(queues.get(result.id) ?? []), result]);
  const results = ids.map((id) => queues.get(id)?.shift() ?? { id, success: false, error: 'no answer for this id from the node writing its partition' });
  return Response.json({ results });
}

/** The part's results, or for each of its ids the error that kept its writer from answering. */
async function resultsOf(ids: string[], send: () => Promise<Response>): Promise<Result[]> {
  let error: string;
  try {
    const answer = await send();
    const body = (await answer.json().catch(() => null)) as { results?: Result[]; error?: { message?: string } } | null;
    if (answer.status === 200 && Array.isArray(body?.results)) return body.results;
    error = body?.error?.message ?? `answered ${answer.status}`;
  } catch (failure) {
    error = failure instanceof DomainError ? failure.message : describeError(failure);
  }
  return ids.map((id) => ({ id, success: false, error }));
}

/** The ids of a well-formed body within the route's cap; null otherwise (the writer answers it). */
async function idsOf(copy: Request): Promise<string[] | null> {
  try {
    const text = await textWithin(copy, BULK_BODY_BYTES_MAX);
    if (text === null) return null;
    const { ids } = JSON.parse(text) as { ids?: unknown };
    return Array.isArray(ids) && ids.length > 0 && ids.every((id) => typeof id === 'string') ? ids : null;
  } catch {
    return null;
  }
}
