/**
 * How the engine, persistence and the HTTP edge report to people without knowing about
 * pino: a sentence, and optionally fields a structured logger keeps beside it. A field
 * `severity` ('warn' | 'error' | 'fatal') raises the record's level, 'debug' lowers it
 * (routine work an operator looks at only when asking); it is not printed.
 * Any `(line: string) => void` is a LogLine, so tests keep collecting plain strings.
 */
import type { Logger } from 'pino';

export type LogFields = Record<string, unknown>;
export type LogLine = (line: string, fields?: LogFields) => void;

const SEVERITIES = new Set(['debug', 'warn', 'error', 'fatal']);

export function logLineTo(logger: Logger): LogLine {
  return (line, fields) => {
    if (fields === undefined) return logger.info(line);
    const { severity, ...rest } = fields;
    const level = typeof severity === 'string' && SEVERITIES.has(severity) ? (severity as 'debug' | 'warn' | 'error' | 'fatal') : 'info';
    logger[level](rest, line);
  };
}
