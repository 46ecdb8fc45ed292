/**
 * Query parameter models shared by the list endpoints (TypeBox; numbers converted from
 * text). A parameter's `default` is what a request without it gets (validQuery fills it
 * in), and what the OpenAPI document shows.
 */
import { Type, type SchemaOptions, type TLiteral, type TUnion } from '@sinclair/typebox';
import { FRAMEWORKS } from '../../actors/ingest/states.ts';

export const literals = <T extends string>(values: readonly T[], options: SchemaOptions = {}): TUnion<TLiteral<T>[]> =>
  Type.Union(
    values.map((value) => Type.Literal(value)),
    options,
  );

export const PAGE_SIZE_MAX = 100;
export const PAGE_NUMBER_MAX = 1_000_000;

export const limitParam = () => Type.Integer({ minimum: 1, maximum: PAGE_SIZE_MAX, default: 50 });
export const pageParam = () => Type.Integer({ minimum: 1, maximum: PAGE_NUMBER_MAX, default: 1 });
export const sortOrderParam = (defaultOrder: 'asc' | 'desc') => literals(['asc', 'desc'] as const, { default: defaultOrder });
export const frameworkParam = () => Type.Optional(literals(FRAMEWORKS));
export const connectionIdParam = () => Type.Optional(Type.String({ maxLength: 64 }));
