/**
 * Server-made identifiers. Ids are time-ordered UUIDv7 (decisions: "prefer v7"), made in
 * `decide` and carried in log records so that replay reproduces them exactly.
 */
export function newId(): string {
  return Bun.randomUUIDv7();
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}
