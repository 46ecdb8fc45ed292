/**
 * The placement map (docs/cluster.md, "Placement by size"): the rankings the coordinating
 * node wrote for one live set after balancing by size (size-balance.ts), stored under one
 * key of the jobwatch_placement bucket and read by every node through a watch. What it
 * holds, and the check a node makes before it trusts one: the same CLUSTER_STANDBYS, every
 * partition key ranked, each ranking every node of the map once.
 */

/** The key of the map in the placement bucket. */
export const PLACEMENT_MAP_KEY = 'map';
const FORMAT = 1;

export interface PlacementMap {
  /** the live set it was written for, sorted */
  nodes: string[];
  /** CLUSTER_STANDBYS as the writer ran it (`all` or a count) */
  standbys: string;
  /** per partition key: every node of `nodes` once, the writer first */
  rankings: Record<string, string[]>;
  /** the node that wrote it, and how many moves it has made since the counted placement (for the log) */
  writtenBy: string;
  moves: number;
}

export function encodePlacementMap(map: PlacementMap): string {
  return JSON.stringify({ format: FORMAT, ...map });
}

/**
 * The map in `text` if it fits this node's keys and CLUSTER_STANDBYS; otherwise a reason
 * it is not used (a node of another setting, or a damaged value: the counted placement applies).
 */
export function decodePlacementMap(text: string, keys: readonly string[], standbys: string): PlacementMap | { unusable: string } {
  let value: Partial<Record<keyof PlacementMap | 'format', unknown>>;
  try {
    value = JSON.parse(text);
  } catch {
    return { unusable: 'it is not JSON' };
  }
  if (value.format !== FORMAT) return { unusable: `format ${String(value.format)}, this node reads ${FORMAT}` };
  if (value.standbys !== standbys) return { unusable: `it was written for CLUSTER_STANDBYS=${String(value.standbys)}, this node runs ${standbys}` };
  const nodes = value.nodes;
  if (!Array.isArray(nodes) || nodes.length === 0 || !nodes.every((node) => typeof node === 'string') || new Set(nodes).size !== nodes.length) return { unusable: 'its node list is not a list of distinct ids' };
  const rankings = value.rankings as Record<string, unknown> | undefined;
  if (typeof rankings !== 'object' || rankings === null) return { unusable: 'it has no rankings' };
  const sorted = [...(nodes as string[])].sort();
  for (const key of keys) {
    const ranking = rankings[key];
    if (!Array.isArray(ranking) || JSON.stringify([...ranking].sort()) !== JSON.stringify(sorted)) return { unusable: `its ranking of ${key} is not every node once` };
  }
  return {
    nodes: sorted,
    standbys,
    rankings: Object.fromEntries(keys.map((key) => [key, rankings[key] as string[]])),
    writtenBy: typeof value.writtenBy === 'string' ? value.writtenBy : '?',
    moves: typeof value.moves === 'number' ? value.moves : 0,
  };
}
