/**
 * Limits for client-controlled free-form objects (`extensions`, worker `metadata`):
 * at most 64 KB serialized, 8 levels deep, and no prototype-polluting keys.
 */
import { rememberJson } from './event-bytes.ts';

export const JSON_OBJECT_BYTES_MAX = 64 * 1024;
export const JSON_OBJECT_DEPTH_MAX = 8;
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Returns a problem description, or null when the object is within limits. */
export function jsonObjectProblem(value: Record<string, unknown>): string | null {
  const shapeProblem = walk(value, 1);
  if (shapeProblem !== null) return shapeProblem;
  const serialized = JSON.stringify(value);
  rememberJson(value, serialized);
  const bytes = Buffer.byteLength(serialized);
  if (bytes > JSON_OBJECT_BYTES_MAX) return `must be at most ${JSON_OBJECT_BYTES_MAX} bytes serialized, got ${bytes}`;
  return null;
}

function walk(value: unknown, depth: number): string | null {
  if (value === null || typeof value !== 'object') return null;
  if (depth > JSON_OBJECT_DEPTH_MAX) return `must be at most ${JSON_OBJECT_DEPTH_MAX} levels deep`;
  // Stryker disable next-line ConditionalExpression,BlockStatement: walked as an object, an array visits the same elements at the same depth, and its keys (indices) are never forbidden
  if (Array.isArray(value)) {
    for (const element of value) {
      const problem = walk(element, depth + 1);
      if (problem !== null) return problem;
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(key)) return `must not contain the key '${key}'`;
    const problem = walk((value as Record<string, unknown>)[key], depth + 1);
    if (problem !== null) return problem;
  }
  return null;
}
