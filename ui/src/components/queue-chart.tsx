/**
 * Succeeded and failed jobs per health bucket over time: two stepped areas in SVG, drawn
 * at the box's own width (nothing is scaled, so lines and labels stay crisp), in the
 * theme's colours. Each bucket's counts are in the health bar above it, on hover. Drawn
 * by hand: the chart library it replaced (uPlot) was half of the dashboard's 50 KB gzip
 * budget for this one chart.
 */
import { useSignal } from '@preact/signals';
import { useLayoutEffect, useRef } from 'preact/hooks';
import type { QueueView } from '../api/types.ts';
import { axisMax } from '../lib/axis.ts';
import { absoluteTime } from '../lib/time.ts';

type Bucket = NonNullable<QueueView['healthBar']>['buckets'][number];

const HEIGHT_PX = 160;
/** room for the job counts left of the plot, and for the times below it */
const LEFT_PX = 40;
const BOTTOM_PX = 20;
const TOP_PX = 8;

export function QueueChart({ buckets, title }: { buckets: Bucket[]; title: string }) {
  const box = useRef<HTMLDivElement>(null);
  const width = useSignal(0);
  useLayoutEffect(() => {
    const element = box.current!;
    const resize = new ResizeObserver(() => (width.value = element.clientWidth));
    resize.observe(element);
    return () => resize.disconnect();
  }, []);
  const w = Math.max(width.value, 240);
  const top = axisMax(Math.max(...buckets.map((bucket) => Math.max(bucket.succeeded, bucket.failed))));
  const x = (index: number) => LEFT_PX + ((w - LEFT_PX) * index) / buckets.length;
  const y = (count: number) => HEIGHT_PX - BOTTOM_PX - ((HEIGHT_PX - BOTTOM_PX - TOP_PX) * count) / top;
  const line = (key: 'succeeded' | 'failed') => `M${x(0)},${y(0)}${buckets.map((bucket, index) => `V${y(bucket[key])}H${x(index + 1)}`).join('')}`;
  // a week of buckets is labelled by day and time, shorter ranges by time
  const long = buckets.length > 1 && Date.parse(buckets.at(-1)!.start) - Date.parse(buckets[0]!.start) > 86_400_000;
  const labels = w < 500 ? 3 : 5;
  const total = (key: 'succeeded' | 'failed') => buckets.reduce((sum, bucket) => sum + bucket[key], 0);
  return (
    <figure class="chart">
      <figcaption class="chart-title">{title}</figcaption>
      <div ref={box} data-testid="queue-chart">
        <svg width={w} height={HEIGHT_PX} role="img" aria-label={`${title}: ${total('succeeded')} succeeded, ${total('failed')} failed`}>
          {[0, top / 2, top].map((count) => (
            <g key={count}>
              <line x1={LEFT_PX} x2={w} y1={y(count)} y2={y(count)} />
              <text x={LEFT_PX - 6} y={y(count)} class="count">
                {count}
              </text>
            </g>
          ))}
          {Array.from({ length: labels }, (_, label) => Math.floor((label * buckets.length) / labels)).map((index) => (
            <text key={index} x={x(index)} y={HEIGHT_PX - 4}>
              {absoluteTime(buckets[index]!.start).slice(long ? 5 : 11, 16)}
            </text>
          ))}
          {(['failed', 'succeeded'] as const).map((key) => (
            <g key={key} class={key}>
              <path d={`${line(key)}V${y(0)}Z`} />
              <path d={line(key)} class="edge" />
            </g>
          ))}
        </svg>
      </div>
      <p class="legend">
        <span class="succeeded">succeeded</span> <span class="failed">failed</span>
      </p>
    </figure>
  );
}
