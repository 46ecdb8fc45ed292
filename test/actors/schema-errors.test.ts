/**
 * How TypeBox failures become the `details` clients read (field path -> messages), on
 * small schemas made for each rule, including shapes the event schemas do not have today
 * (nested paths, a failing root, unions mixing literals and null, very many errors).
 */
import { describe, expect, test } from 'bun:test';
import { Type, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { FieldErrors } from '../../actors/domain-error.ts';
import '../../actors/ingest/event-schema.ts'; // registers the rfc3339 format
import { collectSchemaErrors } from '../../actors/ingest/schema-errors.ts';
import { TIMESTAMP_MESSAGE } from '../../actors/ingest/timestamp-rules.ts';

function errorsOf(schema: TSchema, value: unknown, prefix = 'p'): FieldErrors {
  const into: FieldErrors = {};
  collectSchemaErrors(TypeCompiler.Compile(schema), value, prefix, into);
  return into;
}

describe('field paths', () => {
  test('nested fields are dotted under the prefix; the value itself is the prefix', () => {
    const schema = Type.Object({ a: Type.Object({ b: Type.String() }) });
    expect(errorsOf(schema, { a: { b: 1 } }, 'job')).toEqual({ 'job.a.b': ['expected string'] });
    expect(errorsOf(Type.String(), 1, 'job')).toEqual({ job: ['expected string'] });
  });

  test('without a prefix, fields are named as they are and the value itself is "(root)"', () => {
    expect(errorsOf(Type.Object({ a: Type.Object({ b: Type.String() }) }), { a: { b: 1 } }, '')).toEqual({ 'a.b': ['expected string'] });
    expect(errorsOf(Type.String(), 1, '')).toEqual({ '(root)': ['expected string'] });
  });

  test('messages add up per field, each once, into what was collected before', () => {
    const into: FieldErrors = { other: ['kept'] };
    collectSchemaErrors(TypeCompiler.Compile(Type.Object({ a: Type.String({ minLength: 2 }) })), {}, '', into);
    expect(into).toEqual({ other: ['kept'], a: ['expected required property', 'expected string'] });
  });

  test('at most 20 messages per value', () => {
    const fields = Object.fromEntries(Array.from({ length: 30 }, (_, index) => [`f${String(index).padStart(2, '0')}`, Type.String()]));
    const errors = errorsOf(Type.Object(fields), Object.fromEntries(Object.keys(fields).map((key) => [key, 1])), '');
    expect(Object.keys(errors)).toEqual(Object.keys(fields).slice(0, 20));
  });
});

describe('messages', () => {
  test('TypeBox wording in lower case; the timestamp format has its own message', () => {
    expect(errorsOf(Type.Integer({ minimum: 3 }), 2)).toEqual({ p: ['expected integer to be greater or equal to 3'] });
    expect(errorsOf(Type.String({ format: 'rfc3339' }), 'yesterday')).toEqual({ p: [TIMESTAMP_MESSAGE] });
  });

  test('a union of literals lists them; null among them is not listed', () => {
    expect(errorsOf(Type.Union([Type.Literal('a'), Type.Literal('b')]), 'c')).toEqual({ p: ['must be one of: a, b'] });
    expect(errorsOf(Type.Union([Type.Literal('a'), Type.Literal('b'), Type.Null()]), 'c')).toEqual({ p: ['must be one of: a, b'] });
  });

  test('a union mixing literals with other types is no list of literals', () => {
    // two alternatives are read as "a type or null": the first one's reason is given
    expect(errorsOf(Type.Union([Type.Literal('a'), Type.String({ maxLength: 0 })]), 5)).toEqual({ p: ["expected 'a'"] });
    expect(errorsOf(Type.Union([Type.Literal('a'), Type.Literal('b'), Type.Number(), Type.Null()]), 'c')).toEqual({ p: ['expected union value'] });
  });

  test('a type or null (an optional field) reports why the value fails the type, whichever comes first', () => {
    expect(errorsOf(Type.Union([Type.String({ maxLength: 2 }), Type.Null()]), 'abc')).toEqual({ p: ['expected string length less or equal to 2'] });
    expect(errorsOf(Type.Union([Type.Null(), Type.String()]), 5)).toEqual({ p: ['expected string'] });
    expect(errorsOf(Type.Union([Type.Union([Type.Literal('x'), Type.Literal('y')]), Type.Null()]), 'z')).toEqual({ p: ['must be one of: x, y'] });
  });

  test('a union of more than one type besides null, or of nulls only, gets the plain union message', () => {
    expect(errorsOf(Type.Union([Type.String(), Type.Number(), Type.Null()]), true)).toEqual({ p: ['expected union value'] });
    expect(errorsOf(Type.Union([Type.Null(), Type.Null()]), 5)).toEqual({ p: ['expected union value'] });
  });
});
