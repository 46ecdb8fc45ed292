/**
 * A sum as plain parts (what a shard sends the front): through JSON and added back, parts
 * of several sums give the sum of them all, bin by bin, so percentiles taken after are those
 * of one sum over every value; an empty sum's part carries no gauges or histograms.
 */
import { expect, test } from 'bun:test';
import { binOfMs } from '../../actors/metrics/duration-bins.ts';
import { COUNT_INDEX, GAUGE, MeasureSum, type SumPart } from '../../actors/metrics/measure-sum.ts';
import { SeededRandom } from '../../persistence/seeded-random.ts';

function randomSum(random: SeededRandom): MeasureSum {
  const sum = new MeasureSum();
  for (let at = 0; at < 4; at++) sum.addCount(at, random.int(20));
  for (let n = random.int(40); n > 0; n--) sum.addBin(random.chance(0.5) ? 'run' : 'wait', binOfMs(1 + random.int(600_000)), 1 + random.int(3));
  if (random.chance(0.7)) sum.addGauges(1 + random.int(5), random.int(500), random.int(90), random.int(90_000), random.int(60_000));
  return sum;
}

const throughJson = (part: SumPart): SumPart => JSON.parse(JSON.stringify(part));

test('given several sums, then their parts added up equal the sums added up, percentiles and gauges included', () => {
  const random = new SeededRandom(38);
  for (let round = 0; round < 50; round++) {
    const sums = Array.from({ length: 1 + random.int(5) }, () => randomSum(random));
    const direct = new MeasureSum();
    const fromParts = new MeasureSum();
    for (const sum of sums) {
      direct.add(sum);
      fromParts.addPart(throughJson(sum.toPart()));
    }
    expect([...fromParts.counts]).toEqual([...direct.counts]);
    expect([...fromParts.gauges]).toEqual([...direct.gauges]);
    expect([...fromParts.bins('run')]).toEqual([...direct.bins('run')]);
    expect([...fromParts.bins('wait')]).toEqual([...direct.bins('wait')]);
    expect(fromParts.summary('run')).toEqual(direct.summary('run'));
    expect(fromParts.summary('wait')).toEqual(direct.summary('wait'));
  }
});

test('given an empty sum, then its part is the counts alone, and adding it changes nothing', () => {
  const part = new MeasureSum().toPart();
  expect(part).toEqual({ counts: [0, 0, 0, 0] });
  const sum = new MeasureSum();
  sum.addCount(COUNT_INDEX.failed, 2);
  sum.addBin('run', binOfMs(250), 1);
  sum.addGauges(1, 7, 7, 1_000, 1_000);
  sum.addPart(part);
  expect(sum.count('failed')).toBe(2);
  expect(sum.summary('run').count).toBe(1);
  expect(sum.gauges[GAUGE.depthMax]).toBe(7);
});

test('given a sum with a gauge maximum only in one part, then the added parts keep the larger maximum', () => {
  const deep = new MeasureSum();
  deep.addGauges(1, 90, 90, 10, 10);
  const shallow = new MeasureSum();
  shallow.addGauges(2, 4, 3, 500, 400);
  const sum = new MeasureSum();
  sum.addPart(shallow.toPart());
  sum.addPart(deep.toPart());
  expect([...sum.gauges]).toEqual([3, 94, 90, 510, 400]);
});
