/**
 * A number column holds null as NaN (no job time, retry count or progress is ever NaN):
 * the job table and the snapshot's columns both store it so, and read it back as null.
 */
export const nanForNull = (value: number | null): number => (value === null ? Number.NaN : value);

export const nullForNaN = (value: number): number | null => (Number.isNaN(value) ? null : value);
