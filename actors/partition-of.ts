/**
 * Which partition a connection belongs to in cluster mode: FNV-1a (32-bit) over the
 * id's UTF-8 bytes, modulo the partition count. Every node and every version must agree
 * on it for the life of a cluster (it names the log subject a connection's records go
 * to), so it hashes bytes, not UTF-16 code units, and has no per-process seed.
 */
const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const utf8 = new TextEncoder();

export function fnv1a32(text: string): number {
  let hash = FNV_OFFSET_BASIS;
  for (const byte of utf8.encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, FNV_PRIME);
  }
  return hash >>> 0;
}

export function partitionOf(connectionId: string, partitions: number): number {
  if (!Number.isInteger(partitions) || partitions < 1) throw new RangeError(`partition count must be a positive integer, not ${partitions}`);
  return fnv1a32(connectionId) % partitions;
}

/** One partition of `count`: the scope of a partitioned retention record or snapshot. */
export interface PartitionSelector {
  partition: number;
  partitions: number;
}

export function inPartition(connectionId: string, selector: PartitionSelector): boolean {
  return partitionOf(connectionId, selector.partitions) === selector.partition;
}
