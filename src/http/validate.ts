/**
 * Checks a request body or query against a TypeBox model and returns it typed, or
 * throws a 400 whose `details` names each failing field. Query strings are converted
 * (numbers from text) and the model's defaults fill absent parameters before the check;
 * unknown query parameters are ignored.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import { DomainError, type FieldErrors } from '../../actors/domain-error.ts';
import { collectSchemaErrors } from '../../actors/ingest/schema-errors.ts';
import { ILL_FORMED_MESSAGE, illFormedStringPath } from '../../actors/ingest/well-formed-strings.ts';

export interface Model<T extends TSchema> {
  readonly schema: T;
  /** compiled on first use: compiling every route's model at import was most of the start-up before recovery */
  readonly check: TypeCheck<T>;
}

export function model<T extends TSchema>(schema: T): Model<T> {
  let compiled: TypeCheck<T> | undefined;
  return {
    schema,
    get check(): TypeCheck<T> {
      compiled ??= TypeCompiler.Compile(schema);
      return compiled;
    },
  };
}

export function validBody<T extends TSchema>(model: Model<T>, body: unknown): Static<T> {
  if (body === undefined || body === null || typeof body !== 'object') {
    throw new DomainError('VALIDATION_ERROR', 'request body must be a JSON object', { body: ['must be a JSON object'] });
  }
  const value = checked(model, body);
  refuseIllFormedStrings(model, value as Record<string, unknown>);
  return value;
}

/**
 * Bodies are stored (names, emails): a lone UTF-16 surrogate would change on reload (see
 * well-formed-strings.ts). Only the model's own properties are walked; their depth is the schema's.
 */
function refuseIllFormedStrings<T extends TSchema>(model: Model<T>, value: Record<string, unknown>): void {
  const properties: Record<string, unknown> = model.schema.properties ?? {};
  for (const key of Object.keys(properties)) {
    const path = illFormedStringPath(value[key], key);
    if (path !== null) throw new DomainError('VALIDATION_ERROR', `invalid ${path}`, { [path]: [ILL_FORMED_MESSAGE] });
  }
}

export function validQuery<T extends TSchema>(model: Model<T>, query: Record<string, string | undefined>): Static<T> {
  const present = Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined));
  requirePlainNumbers(model.schema, present);
  return checked(model, Value.Default(model.schema, Value.Convert(model.schema, present)));
}

const PLAIN_TEXT_OF: Record<string, { pattern: RegExp; message: string }> = {
  integer: { pattern: /^-?\d+$/, message: 'must be a whole number written in decimal digits' },
  number: { pattern: /^-?\d+(\.\d+)?$/, message: 'must be a number written in decimal digits' },
};

/**
 * Value.Convert reads numbers as JavaScript does: `1e2`, `0x10`, `+5`, ` 5` and `5.0` would
 * all pass as integers. A query number is accepted only in its plain decimal form.
 */
function requirePlainNumbers(schema: TSchema, query: Record<string, unknown>): void {
  const properties: Record<string, TSchema> = schema.properties ?? {};
  const details: FieldErrors = {};
  for (const [name, value] of Object.entries(query)) {
    const plain = PLAIN_TEXT_OF[properties[name]?.type as string];
    if (plain !== undefined && typeof value === 'string' && !plain.pattern.test(value)) details[name] = [plain.message];
  }
  if (Object.keys(details).length > 0) throw new DomainError('VALIDATION_ERROR', `invalid ${Object.keys(details).join(', ')}`, details);
}

function checked<T extends TSchema>(model: Model<T>, value: unknown): Static<T> {
  if (model.check.Check(value)) return value;
  const details: FieldErrors = {};
  collectSchemaErrors(model.check, value, '', details);
  throw new DomainError('VALIDATION_ERROR', `invalid ${Object.keys(details).join(', ')}`, details);
}
