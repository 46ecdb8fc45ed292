/**
 * Route models compile their TypeBox check on first use (start-up cost), once, and
 * validate exactly as a model compiled up front would.
 */
import { describe, expect, test } from 'bun:test';
import { Type, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { model, validBody } from '../../src/http/validate.ts';
import { DomainError } from '../../actors/domain-error.ts';

const schema = Type.Object({ name: Type.String({ minLength: 1 }), limit: Type.Integer({ minimum: 1 }) });

describe('route models', () => {
  test('compile on first use, and only once', () => {
    const calls: unknown[] = [];
    const original = TypeCompiler.Compile;
    TypeCompiler.Compile = <T extends TSchema>(s: T, references?: TSchema[]) => {
      calls.push(s);
      return original(s, references);
    };
    try {
      const lazy = model(schema);
      expect(calls).toHaveLength(0);
      validBody(lazy, { name: 'a', limit: 1 });
      expect(() => validBody(lazy, { name: '', limit: 0 })).toThrow(DomainError);
      expect(lazy.check).toBe(lazy.check);
      expect(calls).toHaveLength(1);
    } finally {
      TypeCompiler.Compile = original;
    }
  });

  test('accept and refuse what an eagerly compiled check does', () => {
    const eager = TypeCompiler.Compile(schema);
    const lazy = model(schema);
    for (const value of [{ name: 'a', limit: 1 }, { name: '', limit: 1 }, { name: 'a', limit: 0 }, { name: 'a' }, { name: 1, limit: 1.5 }, {}]) {
      expect(lazy.check.Check(value)).toBe(eager.Check(value));
    }
  });
});
