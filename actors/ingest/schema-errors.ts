/**
 * Turns TypeBox failures into the interface's `details` shape: field path -> messages.
 * Only runs on the slow path (an event already failed its compiled check).
 */
import { Kind, type TSchema } from '@sinclair/typebox';
import type { TypeCheck } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import type { FieldErrors } from '../domain-error.ts';
import { TIMESTAMP_MESSAGE } from './timestamp-rules.ts';

const MESSAGES_PER_VALUE_MAX = 20;

export function collectSchemaErrors<T extends TSchema>(check: TypeCheck<T>, value: unknown, prefix: string, into: FieldErrors): void {
  let collected = 0;
  for (const error of check.Errors(value)) {
    if (collected++ >= MESSAGES_PER_VALUE_MAX) break;
    // Stryker disable next-line Regex: a path starts with its only leading slash, so the first slash anywhere is that one
    const path = error.path.replace(/^\//, '').replaceAll('/', '.');
    const field = prefix === '' ? path || '(root)' : path === '' ? prefix : `${prefix}.${path}`;
    const message = messageFor(error.message, error.schema, error.value);
    const messages = (into[field] ??= []);
    if (!messages.includes(message)) messages.push(message);
  }
}

function messageFor(message: string, schema: TSchema, value: unknown): string {
  if (schema.format === 'rfc3339') return TIMESTAMP_MESSAGE;
  const alternatives: TSchema[] | undefined = schema.anyOf;
  if (alternatives !== undefined) {
    const literals = alternatives.filter((alternative) => alternative[Kind] === 'Literal').map((alternative) => String(alternative.const));
    if (literals.length > 0 && literals.length === alternatives.filter((alternative) => alternative[Kind] !== 'Null').length) {
      return `must be one of: ${literals.join(', ')}`;
    }
    // An optional field that also accepts null: report why the value fails the real type.
    const [meaningful] = alternatives.filter((alternative) => alternative[Kind] !== 'Null');
    if (meaningful !== undefined && alternatives.length === 2) {
      const inner = Value.Errors(meaningful, value).First();
      // Stryker disable next-line ConditionalExpression: the union failed, so the value fails its one non-null alternative too
      if (inner !== undefined) return messageFor(inner.message, inner.schema, inner.value);
    }
  }
  return message.toLowerCase();
}
