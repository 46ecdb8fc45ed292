import type { IndexPosition, SortOrder, SortValue } from './sorted-index.ts';

/**
 * Opaque page cursor: base64url of a small JSON object. It carries the sort it was issued for,
 * so that a cursor reused with another sortBy/sortOrder is refused instead of silently
 * resuming at a meaningless place (decisions, "Job lists").
 */
export interface CursorState {
  sortBy: string;
  sortOrder: SortOrder;
  key: SortValue;
  id: string;
}

/** The message is shown to the API client as is. */
export class CursorError extends Error {
  override name = 'CursorError';
}

// Bumped when the encoded shape changes, so an old cursor reads as malformed, not as garbage.
const CURSOR_FORMAT = 1;

interface EncodedCursor {
  v: typeof CURSOR_FORMAT;
  s: string;
  o: SortOrder;
  k: SortValue;
  i: string;
}

const BASE64URL_ALPHABET = /^[A-Za-z0-9_-]+$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

export function encodeCursor(state: CursorState): string {
  // JSON would turn NaN or Infinity into null and the cursor would resume in the wrong place.
  if (typeof state.key === 'number' && !Number.isFinite(state.key)) {
    throw new Error(`cursor key must be a finite number, got ${state.key}`);
  }
  const encoded: EncodedCursor = { v: CURSOR_FORMAT, s: state.sortBy, o: state.sortOrder, k: state.key, i: state.id };
  return Buffer.from(JSON.stringify(encoded), 'utf8').toString('base64url');
}

/** The position to resume after. Throws CursorError for anything but a cursor for this sort. */
export function decodeCursor(cursor: string, sortBy: string, sortOrder: SortOrder): IndexPosition {
  const state = parseCursor(cursor);
  if (state.s !== sortBy || state.o !== sortOrder) {
    throw new CursorError(`cursor was issued for sortBy=${state.s}&sortOrder=${state.o}`);
  }
  return { key: state.k, id: state.i };
}

/**
 * A cursor's position and order without checking them against a query: a shard's front
 * merging shards' pages orders items by the cursors the shards made for them.
 */
export function cursorPosition(cursor: string): IndexPosition & { sortOrder: SortOrder } {
  const state = parseCursor(cursor);
  return { key: state.k, id: state.i, sortOrder: state.o };
}

function parseCursor(cursor: string): EncodedCursor {
  const malformed = new CursorError('cursor is malformed');
  // Buffer.from skips characters outside the alphabet; only a canonical encoding is accepted.
  if (!BASE64URL_ALPHABET.test(cursor)) throw malformed;
  const bytes = Buffer.from(cursor, 'base64url');
  if (bytes.toString('base64url') !== cursor) throw malformed;

  let parsed: unknown;
  try {
    parsed = JSON.parse(strictUtf8.decode(bytes));
  } catch {
    throw malformed;
  }
  if (!isEncodedCursor(parsed)) throw malformed;
  return parsed;
}

function isEncodedCursor(value: unknown): value is EncodedCursor {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const candidate = value as Record<string, unknown>;
  return (
    candidate.v === CURSOR_FORMAT &&
    typeof candidate.s === 'string' &&
    (candidate.o === 'asc' || candidate.o === 'desc') &&
    isSortValue(candidate.k) &&
    typeof candidate.i === 'string'
  );
}

function isSortValue(value: unknown): value is SortValue {
  return value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}
