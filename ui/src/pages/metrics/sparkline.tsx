/** A row's measure over the range as a small line: no axes, scaled to its own highest value; gaps where nothing was measured. */
const WIDTH = 96;
const HEIGHT = 22;

export function Sparkline({ values, label }: { values: Array<number | null>; label: string }) {
  const highest = Math.max(0, ...values.map((value) => value ?? 0));
  const x = (at: number) => ((at + 0.5) * WIDTH) / values.length;
  const y = (value: number) => HEIGHT - 1 - (highest === 0 ? 0 : (value / highest) * (HEIGHT - 2));
  let path = '';
  let drawing = false;
  values.forEach((value, at) => {
    if (value === null) {
      drawing = false;
      return;
    }
    // a segment starts with a dot's worth of line, so a lone value shows
    path += `${drawing ? 'L' : 'M'}${x(at).toFixed(1)} ${y(value).toFixed(1)}${drawing ? '' : 'h1'}`;
    drawing = true;
  });
  return (
    <svg class="spark" width={WIDTH} height={HEIGHT} viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={label}>
      <path d={path} />
    </svg>
  );
}
