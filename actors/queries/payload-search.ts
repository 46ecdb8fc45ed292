/**
 * Search by what a job was called with: `args=<text>` (a piece of the arguments' JSON text)
 * and `data.<path>=<value>` (a field of the arguments equal to a value; `kwargs.<path>` is
 * short for `data.kwargs.<path>`, Celery's keyword arguments). Combined with every other
 * filter and sort of the job list, paged by cursor.
 *
 * How, per connection: first one native scan of the connection's argument texts per
 * needle (text-column.ts) marks the rows whose text holds it; a field term's needle is the
 * value's text, kept where it stands as the last key's value (needlesOf), so it marks every
 * row that can match. Few marked rows are checked whole and sorted (job-list.ts); many are
 * taken as a walk of the list's index in its order meets them, each checked (for a field
 * term, its JSON parsed has the value at the path). At a million 200-byte argument texts a
 * scan takes a few tens of ms on an idle core.
 *
 * Never unbounded: the whole search has a time budget. A scan of the texts that runs past
 * it is abandoned, and the walk then tests each row's text on its own (slower, and
 * stopped by the budget too); a walk that runs past it stops at the row it reached, and
 * the page says the scan was partial, with a cursor to go on from there.
 */
import { assert, validationError } from '../domain-error.ts';
import type { ConnectionActor } from '../connection/connection-actor.ts';
import type { JobStore } from '../connection/job-store.ts';
import { CUT_MARK } from '../ingest/job-payload.ts';

/** One field of the arguments that must equal a value. */
export interface FieldTerm {
  /** the query parameter, for errors */
  param: string;
  path: string[];
  value: string;
}

export interface PayloadQuery {
  /** a piece of the arguments' JSON text */
  contains?: string;
  fields: FieldTerm[];
}

export const PAYLOAD_TEXT_CHARS_MAX = 500;
export const FIELD_TERMS_MAX = 4;
export const PATH_SEGMENTS_MAX = 16;
const SEGMENT_CHARS_MAX = 200;
/** The walk checks its budget every this many rows. */
const ROWS_PER_BUDGET_CHECK = 256;

/** The payload terms of a list query's parameters; null when it has none. */
export function payloadQueryOf(params: Record<string, unknown>): PayloadQuery | null {
  const query: PayloadQuery = { fields: [] };
  for (const [param, raw] of Object.entries(params)) {
    const prefix = param.startsWith('data.') ? 'data.' : param.startsWith('kwargs.') ? 'kwargs.' : param === 'args' ? 'args' : null;
    if (prefix === null) continue;
    if (typeof raw !== 'string') throw validationError(param, 'must be given once');
    if (raw.length > PAYLOAD_TEXT_CHARS_MAX) throw validationError(param, `must be at most ${PAYLOAD_TEXT_CHARS_MAX} characters`);
    if (prefix === 'args') {
      if (raw.length === 0) throw validationError(param, 'must not be empty');
      if (raw.includes('\u0000')) throw validationError(param, 'must not contain U+0000');
      query.contains = raw;
      continue;
    }
    const path = (prefix === 'kwargs.' ? ['kwargs'] : []).concat(param.slice(prefix.length).split('.'));
    if (path.length > PATH_SEGMENTS_MAX || path.some((segment) => segment.length === 0 || segment.length > SEGMENT_CHARS_MAX)) {
      throw validationError(param, `must name a path of 1 to ${PATH_SEGMENTS_MAX} keys of 1 to ${SEGMENT_CHARS_MAX} characters, separated by dots`);
    }
    query.fields.push({ param, path, value: raw });
    if (query.fields.length > FIELD_TERMS_MAX) throw validationError(param, `at most ${FIELD_TERMS_MAX} data. and kwargs. parameters at once`);
  }
  return query.contains === undefined && query.fields.length === 0 ? null : query;
}

/** The time a search may take, shared by every connection it reads. */
export class ScanBudget {
  private readonly deadline: number;
  /** rows the walks looked at */
  examined = 0;

  constructor(
    budgetMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.deadline = now() + budgetMs;
  }

  get spent(): boolean {
    return this.now() >= this.deadline;
  }
}

const utf8 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'utf8'));

/**
 * A piece a matching job's arguments hold, and where it must stand to count (null:
 * anywhere): right after one of `before` and right before a quote, or the end of a JSON
 * value (`,`, `}`, `]`).
 */
export interface Needle {
  text: string;
  places: Array<{ before: string[]; after: 'quote' | 'valueEnd' }> | null;
}

/**
 * What a field term's rows hold, as the service's compact JSON writes it: the value's text
 * (a string's escaped characters), standing as the last key's value: quoted after
 * `"<key>":"`, or, when the value reads as a number, true, false or null, bare after
 * `"<key>":` and ending there (`"userId":42` is not `"userId":421`). One needle, so one
 * scan, finds both; a number written otherwise than JSON writes it (`42.0`) adds its JSON
 * form (`42`). For an array index the value stands after `[` or `,` instead.
 */
export function needlesOf(term: FieldTerm): Needle[] {
  const last = term.path[term.path.length - 1]!;
  const isIndex = /^\d+$/.test(last);
  const key = JSON.stringify(last);
  const quoted = { before: isIndex ? ['["', ',"'] : [`${key}:"`], after: 'quote' as const };
  const bare = { before: isIndex ? ['[', ','] : [`${key}:`], after: 'valueEnd' as const };
  const content = JSON.stringify(term.value).slice(1, -1);
  if (content === '') return [{ text: isIndex ? '""' : `${key}:""`, places: null }];
  const number = Number(term.value);
  const isNumber = term.value.trim() !== '' && Number.isFinite(number);
  const isLiteral = term.value === 'true' || term.value === 'false' || term.value === 'null';
  const needles: Needle[] = [{ text: content, places: isLiteral || (isNumber && String(number) === term.value) ? [quoted, bare] : [quoted] }];
  if (isNumber && String(number) !== term.value) needles.push({ text: String(number), places: [bare] });
  return needles;
}

/** Bytes that end a JSON value in compact JSON: `,`, `}`, `]`. */
const VALUE_ENDS = new Set([0x2c, 0x7d, 0x5d]);
const QUOTE = 0x22;

/** Whether `value` at `path` of the parsed arguments equals the term's value: a string as it is, anything else as its JSON. */
export function fieldMatches(args: unknown, term: FieldTerm): boolean {
  let at: unknown = args;
  for (const segment of term.path) {
    if (Array.isArray(at) && /^\d+$/.test(segment)) at = at[Number(segment)];
    else if (at !== null && typeof at === 'object' && !Array.isArray(at) && Object.hasOwn(at, segment)) at = (at as Record<string, unknown>)[segment];
    else return false;
  }
  if (typeof at === 'string') return at === term.value;
  if (typeof at === 'number') return term.value.trim() !== '' && Number(term.value) === at;
  return at !== undefined && JSON.stringify(at) === term.value;
}

/** One connection's part of a search: which rows can match (when the texts were scanned in time), and the test of a row. */
export class StoreSearch {
  /** rows whose text holds every term's needle; null when the scan ran out of budget */
  private marked: Uint8Array | null = null;
  /** every term is one group of needles, any of which may hold; each group must */
  private readonly needles: Array<Array<{ bytes: Uint8Array; places: Array<{ before: Uint8Array[]; after: 'quote' | 'valueEnd' }> | null }>>;
  /** rows surfaced to the walk because the budget ran out (they are not matches unless `matched` holds them) */
  readonly stoppedAt = new Set<number>();
  readonly matched = new Set<number>();

  readonly store: JobStore;

  constructor(
    readonly actor: ConnectionActor,
    private readonly query: PayloadQuery,
    private readonly budget: ScanBudget,
  ) {
    this.store = actor.jobs;
    const groups: Needle[][] = [...(query.contains === undefined ? [] : [[{ text: query.contains, places: null }]]), ...query.fields.map(needlesOf)];
    this.needles = groups.map((group) =>
      group.map((needle) => ({ bytes: utf8(needle.text), places: needle.places?.map((place) => ({ before: place.before.map(utf8), after: place.after })) ?? null })),
    );
  }

  /** Marks the rows whose arguments hold every term's needles, with one scan of the texts per needle; false when the budget ran out first. */
  markCandidates(): boolean {
    const column = this.store.table.textColumn('args');
    let marked: Uint8Array | null = null;
    for (const group of this.needles) {
      const found = new Uint8Array(this.store.rowSpan);
      for (const needle of group) {
        const places = needle.places;
        const visit =
          places === null
            ? (row: number): void => {
                found[row] = 1;
              }
            : (row: number, at: number): boolean => {
                const next = column.byteAt(at + needle.bytes.length);
                const stands = places.some(
                  (place) => (place.after === 'quote' ? next === QUOTE : VALUE_ENDS.has(next)) && place.before.some((before) => before.every((byte, index) => column.byteAt(at - before.length + index) === byte)),
                );
                if (stands) found[row] = 1;
                return stands;
              };
        if (!column.findRows(needle.bytes, visit, () => this.budget.spent)) return false;
      }
      if (marked === null) marked = found;
      else for (let row = 0; row < marked.length; row++) marked[row] = marked[row]! & found[row]!;
    }
    this.marked = marked;
    return true;
  }

  /** Rows marked, for a count of the matches. */
  *markedRows(): Generator<number> {
    const marked = this.marked;
    assert(marked !== null, 'markedRows after markCandidates completed');
    for (let row = 0; row < marked.length; row++) if (marked[row] === 1) yield row;
  }

  /** Whether a held row's job matches every term (its texts tested on their own where the scan did not finish). */
  matches(row: number): boolean {
    const column = this.store.table.textColumn('args');
    if (!column.has(row)) return false;
    if (this.marked !== null) {
      if (this.marked[row] !== 1) return false;
    } else {
      // the scan ran out of budget: the row's own text, tested for each term (a field term is checked whole below)
      const text = column.view(row);
      const holds = (needle: { bytes: Uint8Array }): boolean => Buffer.prototype.indexOf.call(text, needle.bytes) >= 0;
      if (!this.needles.every((group) => group.some(holds))) return false;
    }
    if (this.query.fields.length === 0) return true;
    const text = column.get(row);
    if (text.startsWith(CUT_MARK)) return false; // kept cut: its fields cannot be read
    const args: unknown = JSON.parse(text);
    return this.query.fields.every((term) => fieldMatches(args, term));
  }

  /**
   * The walk's test of a row: a match, or the row the walk stops at once the budget is spent
   * (surfaced so that the page can end there; `matched` tells whether it also matched).
   */
  readonly rowTest = (row: number): boolean => {
    const matches = this.matches(row);
    if (++this.budget.examined % ROWS_PER_BUDGET_CHECK === 0 && this.budget.spent) {
      this.stoppedAt.add(row);
      if (matches) this.matched.add(row);
      return true;
    }
    return matches;
  };
}
