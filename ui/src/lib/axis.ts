/** The scale of the queue chart's count axis. */

/** The top of the axis: the count or more, 2, 4, 6 or 10 times a power of ten, so that its half (the middle line) is a whole number too. */
export function axisMax(count: number): number {
  for (let power = 1; ; power *= 10) {
    for (const factor of [2, 4, 6, 10]) if (factor * power >= count) return factor * power;
  }
}
