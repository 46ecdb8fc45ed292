/**
 * Client strings must be well-formed Unicode. A lone UTF-16 surrogate (`"\ud800"` in
 * JSON) parses into a JS string, but msgpack and UTF-8 cannot hold it: the log stores a
 * replacement character, so after a restart the string differs from the one served
 * before, dedup keys stop matching and a duplicate job appears. Such strings are refused.
 */

/** The first of `fields` of a schema-checked payload holding an ill-formed string, as a dotted path. */
export function illFormedFieldPath<T extends object>(payload: T, fields: readonly (keyof T & string)[], prefix: string): string | null {
  for (const field of fields) {
    const value = payload[field];
    // most fields are well-formed strings or absent: no path string is built for them
    // Stryker disable next-line ConditionalExpression,LogicalOperator,StringLiteral: a skip for speed; the full walk below finds nothing in such a field either
    if (value == null || (typeof value === 'string' && value.isWellFormed())) continue;
    const found = illFormedStringPath(value, `${prefix}.${field}`);
    if (found !== null) return found;
  }
  return null;
}

/**
 * The dotted path of the first string (value or object key) under `value` that is not
 * well-formed, or null. Callers bound the depth first (the payload schema and
 * json-object-limits.ts), so the recursion is shallow.
 */
export function illFormedStringPath(value: unknown, path: string): string | null {
  if (typeof value === 'string') return value.isWellFormed() ? null : path;
  // Stryker disable next-line ConditionalExpression: Object.entries of a number or boolean is empty, so the walk below finds nothing either
  if (value === null || typeof value !== 'object') return null;
  // Stryker disable next-line ConditionalExpression,BlockStatement: walked as an object, an array gives the same paths (its keys are the indices)
  if (Array.isArray(value)) {
    // Stryker disable next-line EqualityOperator: one step past the end reads undefined, which holds no string
    for (let index = 0; index < value.length; index++) {
      const found = illFormedStringPath(value[index], `${path}.${index}`);
      if (found !== null) return found;
    }
    return null;
  }
  for (const [key, child] of Object.entries(value)) {
    if (!key.isWellFormed()) return path;
    const found = illFormedStringPath(child, `${path}.${key}`);
    if (found !== null) return found;
  }
  return null;
}

export const ILL_FORMED_MESSAGE = 'must be well-formed Unicode (no lone UTF-16 surrogates)';
