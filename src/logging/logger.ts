/**
 * The service's log: pino, writing synchronously to stdout (a line is on its way before
 * `process.exit`, and a crash loses nothing already logged). Two formats of the same
 * records: JSON lines for log collectors (`LOG_FORMAT=json`, or `auto` under
 * NODE_ENV=production) and one readable line per record for a terminal (`pretty`:
 * pino-pretty as a plain synchronous stream, no worker thread).
 *
 * Every record's `msg` is the sentence the service has always printed; structured fields
 * (seq, bytes, durationMs...) ride beside it, so a person and a query both find it.
 */
import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { LogFormatSetting, LogLevel } from '../config.ts';

export type { Logger } from 'pino';

export interface LoggerOptions {
  format: LogFormatSetting;
  level: LogLevel;
  /** NODE_ENV=production: what `auto` follows */
  production: boolean;
  /** where lines go; stdout by default (tests pass a buffer) */
  destination?: DestinationStream;
  /** colours in the readable format; by default when stdout is a terminal */
  colorize?: boolean;
}

export function resolvedFormat(format: LogFormatSetting, production: boolean): 'json' | 'pretty' {
  if (format !== 'auto') return format;
  return production ? 'json' : 'pretty';
}

export function createLogger(options: LoggerOptions): Logger {
  const stdout = options.destination ?? pino.destination({ dest: 1, sync: true });
  if (resolvedFormat(options.format, options.production) === 'json') {
    return pino(
      {
        level: options.level,
        timestamp: pino.stdTimeFunctions.isoTime,
        // `"level":"info"` reads and filters better in a collector than pino's 30
        formatters: { level: (label) => ({ level: label }) },
      },
      stdout,
    );
  }
  const readable = pretty({
    sync: true,
    destination: stdout,
    singleLine: true,
    colorize: options.colorize ?? process.stdout.isTTY === true,
    translateTime: "UTC:yyyy-mm-dd'T'HH:MM:ss.l'Z'",
    ignore: 'pid,hostname',
  });
  return pino({ level: options.level }, readable);
}
