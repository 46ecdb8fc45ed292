/**
 * Succeeded and failed jobs per health bucket over time, drawn by uPlot in the theme's
 * colours. uPlot is loaded with the first chart drawn (most page loads draw none; ui/build.ts).
 */
import { useEffect, useRef } from 'preact/hooks';
import type uPlot from 'uplot';
import type { QueueView } from '../api/types.ts';

const loadUplot = (): Promise<typeof uPlot> => import('uplot').then((module) => module.default);

type Bucket = NonNullable<QueueView['healthBar']>['buckets'][number];

const HEIGHT_PX = 160;

function chartData(buckets: Bucket[]): uPlot.AlignedData {
  return [buckets.map((bucket) => Date.parse(bucket.start) / 1000), buckets.map((bucket) => bucket.succeeded), buckets.map((bucket) => bucket.failed)];
}

function cssColor(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';
}

export function QueueChart({ buckets, title }: { buckets: Bucket[]; title: string }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  useEffect(() => {
    let gone = false;
    let resize: ResizeObserver | undefined;
    void loadUplot().then((UPlot) => {
      if (gone) return;
      resize = draw(UPlot);
    });
    return () => {
      gone = true;
      resize?.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, []);
  /** Draws the chart; returns what keeps its width. */
  function draw(UPlot: typeof uPlot): ResizeObserver {
    const element = box.current!;
    const axis = { stroke: cssColor('--muted'), grid: { stroke: cssColor('--border'), width: 1 }, ticks: { stroke: cssColor('--border') } };
    // a bucket's count holds for the whole bucket: steps, not slopes between points
    const paths = UPlot.paths.stepped?.({ align: 1 });
    const options: uPlot.Options = {
      width: Math.max(element.clientWidth, 240),
      height: HEIGHT_PX,
      scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      // job counts: whole-number steps on the y axis
      axes: [axis, { ...axis, size: 40, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 1e5, 1e6] }],
      series: [
        {},
        { label: 'succeeded', stroke: cssColor('--succeeded'), fill: cssColor('--succeeded') + '33', width: 1.5, points: { show: false }, paths },
        { label: 'failed', stroke: cssColor('--failed'), fill: cssColor('--failed') + '33', width: 1.5, points: { show: false }, paths },
      ],
    };
    plot.current = new UPlot(options, chartData(buckets), element);
    const resize = new ResizeObserver(() => plot.current?.setSize({ width: Math.max(element.clientWidth, 240), height: HEIGHT_PX }));
    resize.observe(element);
    return resize;
  }
  useEffect(() => {
    plot.current?.setData(chartData(buckets));
  }, [buckets]);
  return (
    <figure class="chart">
      <figcaption class="chart-title">{title}</figcaption>
      <div ref={box} data-testid="queue-chart" />
    </figure>
  );
}
