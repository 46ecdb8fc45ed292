/**
 * What a job was called with and what it gave back, as the service keeps them: `args`,
 * `result` and a progress object become JSON texts, masked by the key patterns
 * (redaction.ts) and cut at a configured size; `logs` become one JSON array of lines. All
 * of it is decided on ingest, so the log's record holds the texts kept and replay makes
 * the same rows.
 *
 * A text past its size is kept as its head, marked: CUT_MARK, the whole text's size in
 * bytes, CUT_MARK, then the head of the JSON text (not valid JSON on its own). A reader
 * (`readPayloadText`) says it was cut and how large it was; a search of the arguments
 * still finds what is in the head.
 */
import { KeyRedactor } from './redaction.ts';

export interface PayloadLimits {
  /** bytes of a job's arguments as JSON text; past them the head is kept, marked cut */
  argsBytesMax: number;
  /** bytes of a run's result as JSON text; past them the head is kept, marked cut */
  resultBytesMax: number;
  /** bytes of a job's log, its lines as a JSON array; the oldest lines go first */
  logBytesMax: number;
  /** lines of a job's log; the oldest go first */
  logLinesMax: number;
  /** key patterns whose values are masked (redaction.ts) */
  redactKeys: readonly string[];
}

const KIB = 1024;

export const PAYLOAD_LIMIT_DEFAULTS: PayloadLimits = {
  argsBytesMax: 64 * KIB,
  resultBytesMax: 64 * KIB,
  logBytesMax: 256 * KIB,
  logLinesMax: 1_000,
  redactKeys: ['password', 'passwd', 'secret', 'token', 'api_key', 'apikey', 'authorization', 'cookie', 'credit_card', 'card_number', 'ssn'],
};

/** A progress object is small by nature: past this it is kept cut, like an argument text. */
export const PROGRESS_DATA_BYTES_MAX = 16 * KIB;
/** A log line past this many characters is cut, marked with an ellipsis. */
export const LOG_LINE_CHARS_MAX = 16 * KIB;
/** Lines one event may add to a job's log. */
export const LOG_LINES_PER_EVENT_MAX = 1_000;
/** What a trimmed log keeps, as a share of its caps: trimming makes room for more than one event, so a busy log is not rewritten at each. */
const LOG_TRIM_SHARE = 0.75;

export const CUT_MARK = '\u0001';

/** The ingest side: a redactor made once per set of limits. */
export class PayloadRules {
  readonly redactor: KeyRedactor;

  constructor(readonly limits: PayloadLimits) {
    this.redactor = new KeyRedactor(limits.redactKeys);
  }

  /** Any JSON value as the text kept: masked, and cut past `bytesMax`. */
  text(value: unknown, bytesMax: number): string {
    return cutText(this.redactor.json(value), bytesMax);
  }

  /** Log lines as the JSON array appended to a job's log; each line cut past LOG_LINE_CHARS_MAX. */
  logLines(lines: readonly string[]): string {
    return JSON.stringify(lines.map((line) => (line.length > LOG_LINE_CHARS_MAX ? `${line.slice(0, LOG_LINE_CHARS_MAX)}…` : line)));
  }
}

/** `text` whole when it fits `bytesMax`, else its head marked cut (see the file's comment). */
export function cutText(text: string, bytesMax: number): string {
  const bytes = Buffer.byteLength(text);
  if (bytes <= bytesMax) return text;
  // the head in bytes, cut back to a whole character
  const head = Buffer.from(text).subarray(0, bytesMax).toString('utf8').replace(/\uFFFD$/, '');
  return `${CUT_MARK}${bytes}${CUT_MARK}${head}`;
}

/** A kept text as its value, or as its head when it was cut (with the whole text's bytes). */
export function readPayloadText(text: string): { value: unknown; cutFromBytes: number | null } {
  if (!text.startsWith(CUT_MARK)) return { value: JSON.parse(text), cutFromBytes: null };
  const end = text.indexOf(CUT_MARK, 1);
  return { value: text.slice(end + 1), cutFromBytes: Number(text.slice(1, end)) };
}

/**
 * A job's log with `lines` (a JSON array of strings) appended, and how many lines it holds:
 * past either cap the oldest lines go, down to three quarters of the caps.
 */
export function appendedLog(held: string | null, heldLines: number, lines: string, added: number, limits: Pick<PayloadLimits, 'logBytesMax' | 'logLinesMax'>): { text: string; lines: number } {
  const text = held === null || heldLines === 0 ? lines : added === 0 ? held : `${held.slice(0, -1)},${lines.slice(1)}`;
  const count = heldLines + added;
  if (count <= limits.logLinesMax && Buffer.byteLength(text) <= limits.logBytesMax) return { text, lines: count };
  const kept = JSON.parse(text) as string[];
  const linesMax = Math.max(1, Math.floor(limits.logLinesMax * LOG_TRIM_SHARE));
  const bytesMax = Math.floor(limits.logBytesMax * LOG_TRIM_SHARE);
  let first = Math.max(0, kept.length - linesMax);
  let bytes = 2;
  for (let index = kept.length - 1; index >= first; index--) {
    bytes += Buffer.byteLength(JSON.stringify(kept[index])) + 1;
    if (bytes > bytesMax && index < kept.length - 1) {
      first = index + 1;
      break;
    }
  }
  const newest = kept.slice(first);
  return { text: JSON.stringify(newest), lines: newest.length };
}

/**
 * How far a progress object says its run is, 0 to 1, when it says so in a way commonly used:
 * `percent` or `percentage` (0 to 100), `progress`, `fraction` or `ratio` (0 to 1), or a
 * count of done out of a `total` (`current`, `done`, `completed`, `processed`, `count`).
 * Undefined otherwise: the object is kept and shown, without a bar.
 */
export function progressFractionOf(progress: Record<string, unknown>): number | undefined {
  const number = (key: string): number | undefined => {
    const value = progress[key];
    return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
  };
  const clamp = (value: number): number => Math.min(1, Math.max(0, value));
  const percent = number('percent') ?? number('percentage');
  if (percent !== undefined) return clamp(percent / 100);
  const fraction = number('progress') ?? number('fraction') ?? number('ratio');
  if (fraction !== undefined) return clamp(fraction);
  const total = number('total');
  const done = number('current') ?? number('done') ?? number('completed') ?? number('processed') ?? number('count');
  if (total !== undefined && total > 0 && done !== undefined) return clamp(done / total);
  return undefined;
}
