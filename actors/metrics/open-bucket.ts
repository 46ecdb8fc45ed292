/**
 * A bucket still being written: its counts, its two histograms as sorted (bin, count)
 * pairs (a minute of one task hits a few bins of the 289, so dense bins would waste most of
 * their 2 KB), and a queue's gauges. Sealed buckets are bytes (bucket-codec.ts).
 */
import { COUNT_KINDS, GAUGE, GAUGE_FIELDS, PART, type BucketTarget, type DurationKind } from './measure-sum.ts';

/** (bin, count) pairs sorted by bin. */
export class SparseBins {
  private binList = new Uint16Array(4);
  private countList = new Float64Array(4);
  size = 0;

  add(bin: number, count: number): void {
    let low = 0;
    let high = this.size;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.binList[middle]! < bin) low = middle + 1;
      else high = middle;
    }
    if (low < this.size && this.binList[low] === bin) {
      this.countList[low]! += count;
      return;
    }
    if (this.size === this.binList.length) this.grow();
    this.binList.copyWithin(low + 1, low, this.size);
    this.countList.copyWithin(low + 1, low, this.size);
    this.binList[low] = bin;
    this.countList[low] = count;
    this.size++;
  }

  binAt(at: number): number {
    return this.binList[at]!;
  }

  countAt(at: number): number {
    return this.countList[at]!;
  }

  get bytes(): number {
    return this.binList.byteLength + this.countList.byteLength;
  }

  private grow(): void {
    const bins = new Uint16Array(this.binList.length * 2);
    bins.set(this.binList);
    const counts = new Float64Array(this.countList.length * 2);
    counts.set(this.countList);
    this.binList = bins;
    this.countList = counts;
  }
}

export class OpenBucket implements BucketTarget {
  readonly counts = new Float64Array(COUNT_KINDS.length);
  run: SparseBins | null = null;
  wait: SparseBins | null = null;
  gauges: Float64Array | null = null;

  addCount(index: number, count: number): void {
    this.counts[index]! += count;
  }

  addBin(kind: DurationKind, bin: number, count: number): void {
    const bins = kind === 'run' ? (this.run ??= new SparseBins()) : (this.wait ??= new SparseBins());
    bins.add(bin, count);
  }

  addGauges(samples: number, depthSum: number, depthMax: number, ageSumMs: number, ageMaxMs: number): void {
    const gauges = (this.gauges ??= new Float64Array(GAUGE_FIELDS));
    gauges[GAUGE.samples]! += samples;
    gauges[GAUGE.depthSum]! += depthSum;
    gauges[GAUGE.depthMax] = Math.max(gauges[GAUGE.depthMax]!, depthMax);
    gauges[GAUGE.ageSumMs]! += ageSumMs;
    gauges[GAUGE.ageMaxMs] = Math.max(gauges[GAUGE.ageMaxMs]!, ageMaxMs);
  }

  /** Adds the parts named by `parts` (PART bits) to `target`. */
  addInto(target: BucketTarget, parts: number): void {
    if (parts & PART.counts) {
      for (let at = 0; at < COUNT_KINDS.length; at++) if (this.counts[at] !== 0) target.addCount(at, this.counts[at]!);
    }
    if (parts & PART.run && this.run !== null) addBins(target, 'run', this.run);
    if (parts & PART.wait && this.wait !== null) addBins(target, 'wait', this.wait);
    if (parts & PART.gauges && this.gauges !== null) {
      const g = this.gauges;
      target.addGauges(g[GAUGE.samples]!, g[GAUGE.depthSum]!, g[GAUGE.depthMax]!, g[GAUGE.ageSumMs]!, g[GAUGE.ageMaxMs]!);
    }
  }

  /** An estimate of the heap it holds, for the memory figures. */
  get bytes(): number {
    return 120 + this.counts.byteLength + (this.run?.bytes ?? 0) + (this.wait?.bytes ?? 0) + (this.gauges?.byteLength ?? 0);
  }
}

function addBins(target: BucketTarget, kind: DurationKind, bins: SparseBins): void {
  for (let at = 0; at < bins.size; at++) target.addBin(kind, bins.binAt(at), bins.countAt(at));
}
