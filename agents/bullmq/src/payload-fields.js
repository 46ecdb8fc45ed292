// A job's data, return value, progress and log lines as jobwatch takes them: parsed from
// the JSON text BullMQ keeps, masked (the values of secret-looking keys, at any depth),
// bounded (limits.js's PAYLOAD_BOUNDS), and the arguments of the jobs named by
// `--omit-args` left out entirely. Nothing here reads Redis; job-payloads.js does.
import { AGENT_BOUNDS, LOG_BYTES_PER_EVENT_MAX, LOG_LINE_CHARS, PAYLOAD_BOUNDS, PROGRESS_BYTES_MAX, cutMarked, truncatedMark } from './limits.js';
import { boundJson, boundPayload } from './bound-json.js';
import { OmittedNames, Redactor } from './redaction.js';

/** Text past this is not parsed (a stream entry's return value or progress can be anything the app wrote): jobwatch gets its size. */
export const PARSED_CHARS_MAX = 4 * 1024 * 1024;
const PROGRESS_BOUNDS = Object.freeze({ ...AGENT_BOUNDS, bytesMax: PROGRESS_BYTES_MAX });

/** BullMQ progress (a number, by convention 0..100, or any JSON) as jobwatch's 0..1, or null. @param {unknown} value */
export function progressFraction(value) {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.min(1, Math.max(0, value / 100));
  return null;
}

export class PayloadFields {
  /** @param {{redactKeys?: readonly string[], omitArgs?: readonly string[]}} [options] */
  constructor({ redactKeys, omitArgs = [] } = {}) {
    this.redactor = new Redactor(redactKeys);
    this.omitted = new OmittedNames(omitArgs);
  }

  /** Whether the arguments of jobs called `name` are sent. @param {string} name */
  sendsArgsOf(name) {
    return !this.omitted.has(name);
  }

  /**
   * A value BullMQ kept as JSON text (a job's data, a return value), masked and bounded;
   * undefined for none. `bytes` is its size when it was too large to read.
   * @param {string | null | undefined} text @param {number} [bytes]
   */
  value(text, bytes = 0) {
    if (typeof text !== 'string') return bytes > 0 ? truncatedMark(`${bytes} bytes`) : undefined;
    if (text.length > PARSED_CHARS_MAX) return truncatedMark(`${Buffer.byteLength(text)} bytes`);
    let value;
    try {
      value = JSON.parse(text);
    } catch {
      value = text; // not JSON (an app that wrote the hash itself): the text, bounded as a string
    }
    return boundPayload(value, PAYLOAD_BOUNDS, this.redactor);
  }

  /**
   * A progress entry's data: a number (BullMQ's convention, 0..100) as jobwatch's fraction,
   * an object as jobwatch's progress object (masked, bounded); anything else BullMQ allows
   * (a string, an array) stays in extensions.progress, as the agent always sent it.
   * @param {string | undefined} text
   * @returns {{progress?: number | Record<string, unknown>, extensions?: Record<string, unknown>}}
   */
  progress(text) {
    if (text === undefined) return {};
    if (text.length > PARSED_CHARS_MAX) return { extensions: { progressTooLarge: true } };
    let value;
    try {
      value = JSON.parse(text);
    } catch {
      value = text;
    }
    const fraction = progressFraction(value);
    if (fraction !== null) return { progress: fraction };
    if (typeof value === 'number') return {}; // not finite: no progress at all
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const bounded = boundPayload(value, PROGRESS_BOUNDS, this.redactor);
      if (bounded !== null && typeof bounded === 'object' && !Array.isArray(bounded)) return { progress: /** @type {Record<string, unknown>} */ (bounded) };
      return { extensions: { progressTooLarge: true } };
    }
    return { extensions: boundJson({ progress: value }, AGENT_BOUNDS, this.redactor) };
  }

  /**
   * Log lines read from the job's log, each cut to what jobwatch keeps of a line, the
   * newest within LOG_BYTES_PER_EVENT_MAX as JSON; lines left out (more than one read
   * takes) are said in a first line.
   * @param {{lines: string[], skipped: number}} read
   */
  logLines(read) {
    const lines = read.lines.map((line) => cutMarked(line, LOG_LINE_CHARS));
    // Redis counted raw bytes; as JSON a line of control characters takes up to six times as many
    let skipped = read.skipped;
    let bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(JSON.stringify(line)) + 1, 0);
    while (bytes > LOG_BYTES_PER_EVENT_MAX && lines.length > 1) {
      bytes -= Buffer.byteLength(JSON.stringify(lines.shift())) + 1;
      skipped += 1;
    }
    if (skipped > 0) lines.unshift(truncatedMark(`${skipped} earlier log ${skipped === 1 ? 'line' : 'lines'} not read`));
    return lines;
  }
}
