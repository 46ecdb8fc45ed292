/**
 * The check every record and snapshot chunk passes when it is read back (from the log, a
 * snapshot file, JetStream or the object store): a checksum proves the bytes are the ones
 * written, not that they are what this version reads. A value of another shape would be
 * skipped without a word or applied half (a chunk replaced by `{}` lost every account, and
 * a fresh admin was made over it), so it stops the start instead, saying what was expected.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

/** A stored value is not what this version reads; the message says where and what was expected. */
export class ShapeError extends Error {
  override readonly name = 'ShapeError';
}

/** A compiled check of `schema`: returns the value typed, or throws a ShapeError naming `what`, the path and what was expected there. */
export function shapeCheck<T extends TSchema>(what: string, schema: T): (value: unknown) => Static<T> {
  const compiled = TypeCompiler.Compile(schema);
  return (value) => {
    if (compiled.Check(value)) return value;
    const first = compiled.Errors(value).First();
    const where = first === undefined || first.path === '' ? '' : ` at ${first.path}`;
    const expected = first === undefined ? 'expected another value' : expectation(first.schema, first.message);
    throw new ShapeError(`${what}${where}: ${expected}, found ${describeValue(first === undefined ? value : first.value)}`);
  };
}

/**
 * TypeBox's words for what a schema wanted; a union of literals is spelled out ("one of
 * 'queued', 'active'"), and a kind of our own by its title.
 */
function expectation(schema: TSchema, message: string): string {
  if (typeof schema.title === 'string' && message.startsWith('Expected kind')) return `expected ${schema.title}`;
  const options = (schema as { anyOf?: Array<{ const?: unknown }> }).anyOf;
  if (options !== undefined && options.length > 0 && options.every((option) => option.const !== undefined)) {
    return `expected one of ${options.map((option) => JSON.stringify(option.const)).join(', ')}`;
  }
  return message.charAt(0).toLowerCase() + message.slice(1);
}

/** A short description of a found value: its type, and a short one's text. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (value instanceof Uint8Array) return `${value.length} bytes`;
  if (typeof value === 'object') {
    const keys = Object.keys(value);
    return keys.length === 0 ? 'an empty object' : `an object with ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ', ...' : ''}`;
  }
  if (typeof value === 'string') return value.length <= 40 ? JSON.stringify(value) : `a string of ${value.length} characters`;
  return `${typeof value} ${String(value)}`;
}
