/**
 * Server-made identifiers. Ids are time-ordered UUIDv7 (decisions: "prefer v7"), made in
 * `decide` and carried in log records so that replay reproduces them exactly.
 */
export function newId(): string {
  return Bun.randomUUIDv7();
}
