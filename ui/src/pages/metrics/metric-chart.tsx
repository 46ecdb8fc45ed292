/**
 * One measure of a task over time, drawn by uPlot in the theme's colours, with the
 * connection's markers as labelled vertical lines (deploys, configuration changes).
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { PublicMarker } from '../../api/types.ts';

export interface ChartLine {
  label: string;
  /** a CSS custom property of the theme */
  color: string;
  values: Array<number | null>;
}

const HEIGHT_PX = 180;

function cssColor(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';
}

/** Draws each marker inside the plot area: a dashed line and its name at the top. */
function markerPlugin(markers: () => PublicMarker[]): uPlot.Plugin {
  return {
    hooks: {
      draw: [
        (u) => {
          const { ctx } = u;
          const { top, height } = u.bbox;
          ctx.save();
          ctx.strokeStyle = ctx.fillStyle = cssColor('--accent');
          ctx.setLineDash([4, 3]);
          ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
          for (const marker of markers()) {
            const x = u.valToPos(Date.parse(marker.at) / 1000, 'x', true);
            if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
            ctx.beginPath();
            ctx.moveTo(x, top);
            ctx.lineTo(x, top + height);
            ctx.stroke();
            ctx.fillText(marker.name, x + 4 * devicePixelRatio, top + 12 * devicePixelRatio);
          }
          ctx.restore();
        },
      ],
    },
  };
}

export function MetricChart(props: { title: string; times: number[]; lines: ChartLine[]; markers: PublicMarker[]; format: (value: number) => string; stepped?: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const markers = useRef(props.markers);
  markers.current = props.markers;
  const data = (): uPlot.AlignedData => [props.times, ...props.lines.map((line) => line.values)];
  const shape = props.lines.map((line) => line.label).join();
  useEffect(() => {
    const element = box.current!;
    const axis = { stroke: cssColor('--muted'), grid: { stroke: cssColor('--border'), width: 1 }, ticks: { stroke: cssColor('--border') } };
    const paths = props.stepped ? uPlot.paths.stepped?.({ align: 1 }) : undefined;
    const options: uPlot.Options = {
      width: Math.max(element.clientWidth, 240),
      height: HEIGHT_PX,
      scales: { y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.05 : 1] } },
      axes: [axis, { ...axis, size: 64, values: (_u, ticks) => ticks.map(props.format) }],
      series: [
        {},
        ...props.lines.map((line) => ({
          label: line.label,
          stroke: cssColor(line.color),
          width: 1.5,
          // uPlot shows the points themselves when they are few (a task that ran once)
          spanGaps: false,
          value: (_u: uPlot, value: number | null) => (value === null ? '–' : props.format(value)),
          ...(paths === undefined ? {} : { paths, fill: cssColor(line.color) + '22' }),
        })),
      ],
      plugins: [markerPlugin(() => markers.current)],
    };
    plot.current = new uPlot(options, data(), element);
    const resize = new ResizeObserver(() => plot.current?.setSize({ width: Math.max(element.clientWidth, 240), height: HEIGHT_PX }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [shape]);
  useEffect(() => {
    plot.current?.setData(data());
  }, [props.times, props.lines, props.markers]);
  return (
    <figure class="chart">
      <figcaption class="chart-title">{props.title}</figcaption>
      <div ref={box} data-testid="metric-chart" />
    </figure>
  );
}
