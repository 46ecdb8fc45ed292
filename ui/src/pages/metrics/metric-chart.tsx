/**
 * One measure of a task over time in SVG, drawn at the box's own width like the queue
 * chart (nothing scaled, so lines and labels stay crisp), in the theme's colours: a line
 * per series (gaps where nothing was measured), or stepped areas for counts, and the
 * connection's markers as dashed, labelled lines. Hovering a step shows its values.
 */
import { useSignal } from '@preact/signals';
import { useLayoutEffect, useRef } from 'preact/hooks';
import type { PublicMarker } from '../../api/types.ts';
import { absoluteTime } from '../../lib/time.ts';

export interface ChartLine {
  label: string;
  /** the class that gives its colour: `accent`, `warn`, `succeeded` or `failed` */
  tone: string;
  values: Array<number | null>;
}

const HEIGHT_PX = 170;
/** room for the values left of the plot, and for the times below it */
const LEFT_PX = 64;
const BOTTOM_PX = 20;
const TOP_PX = 14;
/** steps that get a hover box each; beyond it the chart stays light */
const HOVER_STEPS_MAX = 400;

/** The top of the value axis: the highest value or more, 1, 2, 4 or 6 times a power of ten. */
export function niceMax(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 4, 6, 10].map((factor) => factor * power).find((top) => top >= value) ?? 10 * power;
}

export function MetricChart(props: { title: string; times: number[]; stepMs: number; lines: ChartLine[]; markers: PublicMarker[]; format: (value: number) => string; stepped?: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  const width = useSignal(0);
  useLayoutEffect(() => {
    const element = box.current!;
    const resize = new ResizeObserver(() => (width.value = element.clientWidth));
    resize.observe(element);
    return () => resize.disconnect();
  }, []);
  const { times, lines } = props;
  const w = Math.max(width.value, 240);
  const steps = times.length;
  const startMs = times[0] ?? 0;
  const endMs = startMs + steps * props.stepMs;
  const top = niceMax(Math.max(0, ...lines.flatMap((line) => line.values.map((value) => value ?? 0))));
  const xAt = (ms: number) => LEFT_PX + ((w - LEFT_PX) * (ms - startMs)) / Math.max(1, endMs - startMs);
  const x = (index: number) => xAt(startMs + index * props.stepMs);
  const y = (value: number) => HEIGHT_PX - BOTTOM_PX - ((HEIGHT_PX - BOTTOM_PX - TOP_PX) * value) / top;
  const long = endMs - startMs > 86_400_000;
  const labels = w < 500 ? 3 : 6;
  const iso = (ms: number) => new Date(ms).toISOString();
  return (
    <figure class="chart">
      <figcaption class="chart-title">{props.title}</figcaption>
      <div ref={box} data-testid="metric-chart">
        <svg width={w} height={HEIGHT_PX} role="img" aria-label={`${props.title}, ${lines.map((line) => line.label).join(', ')}`}>
          {[0, top / 2, top].map((value) => (
            <g key={value}>
              <line x1={LEFT_PX} x2={w} y1={y(value)} y2={y(value)} />
              <text x={LEFT_PX - 6} y={y(value)} class="count">
                {props.format(value)}
              </text>
            </g>
          ))}
          {steps > 0 &&
            Array.from({ length: labels }, (_, label) => Math.floor((label * steps) / labels)).map((index) => (
              <text key={index} x={x(index)} y={HEIGHT_PX - 4}>
                {absoluteTime(iso(times[index]!)).slice(long ? 5 : 11, 16)}
              </text>
            ))}
          {lines.map((line) => (
            <g key={line.label} class={line.tone}>
              {props.stepped ? (
                <>
                  <path d={`${stepPath(line.values, x, y)}V${y(0)}Z`} />
                  <path d={stepPath(line.values, x, y)} class="edge" />
                </>
              ) : (
                <>
                  <path d={linePath(line.values, (index) => (x(index) + x(index + 1)) / 2, y)} class="edge" />
                  {/* a value with nothing measured on either side has no line to be on: a dot */}
                  {line.values.map((value, index) =>
                    value !== null && line.values[index - 1] == null && line.values[index + 1] == null ? <circle key={index} cx={(x(index) + x(index + 1)) / 2} cy={y(value)} r={2.5} /> : null,
                  )}
                </>
              )}
            </g>
          ))}
          <Markers markers={props.markers} xAt={xAt} width={w} />
          {steps <= HOVER_STEPS_MAX &&
            times.map((ms, index) => (
              <rect key={ms} class="hover" x={x(index)} y={TOP_PX} width={Math.max(1, x(index + 1) - x(index))} height={HEIGHT_PX - BOTTOM_PX - TOP_PX}>
                <title>{`${absoluteTime(iso(ms)).slice(0, 16)}: ${lines.map((line) => `${line.label} ${line.values[index] == null ? '–' : props.format(line.values[index]!)}`).join(', ')}`}</title>
              </rect>
            ))}
        </svg>
      </div>
      <p class="legend">
        {lines.map((line) => (
          <span key={line.label} class={line.tone}>
            {line.label}
          </span>
        ))}
      </p>
    </figure>
  );
}

/** The markers inside the plotted time: a dashed line each, its name at the top, its time on hover. */
function Markers(props: { markers: PublicMarker[]; xAt: (ms: number) => number; width: number }) {
  return (
    <>
      {props.markers.map((marker) => {
        const at = props.xAt(Date.parse(marker.at));
        if (at < LEFT_PX || at > props.width) return null;
        return (
          <g key={marker.id} class="marker">
            <title>{`${marker.name}, ${absoluteTime(marker.at)}`}</title>
            <line x1={at} x2={at} y1={TOP_PX - 10} y2={HEIGHT_PX - BOTTOM_PX} />
            {/* near the right edge the name goes left of its line, so it is not cut off */}
            <text x={at > props.width - 120 ? at - 4 : at + 4} y={TOP_PX - 2} class={at > props.width - 120 ? 'before' : undefined}>
              {marker.name}
            </text>
          </g>
        );
      })}
    </>
  );
}

/** A line through the measured steps, broken where one measured nothing; a lone value is a dot's worth of line. */
function linePath(values: ReadonlyArray<number | null>, x: (index: number) => number, y: (value: number) => number): string {
  let path = '';
  let drawing = false;
  values.forEach((value, index) => {
    if (value === null) {
      drawing = false;
      return;
    }
    path += `${drawing ? 'L' : 'M'}${x(index).toFixed(1)},${y(value).toFixed(1)}${drawing ? '' : 'h.5'}`;
    drawing = true;
  });
  return path;
}

/** Each step's value held across the step (counts per step), nothing as 0. */
function stepPath(values: ReadonlyArray<number | null>, x: (index: number) => number, y: (value: number) => number): string {
  return `M${x(0)},${y(0)}${values.map((value, index) => `V${y(value ?? 0).toFixed(1)}H${x(index + 1).toFixed(1)}`).join('')}`;
}
