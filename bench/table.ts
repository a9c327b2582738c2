/**
 * How the benchmarks print: plain aligned columns, and the machine's load average, so a
 * figure read later says how busy the machine was when it was taken.
 */
import { availableParallelism, loadavg } from 'node:os';

/** Rows under a header, each column as wide as its widest cell, two spaces apart. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map((row) => row[i]?.length ?? 0)),
  );
  const line = (cells: readonly string[]) =>
    cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The 1, 5 and 15 minute load averages, and the cores they are out of. */
export function loadAverage(): string {
  const load = loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
  return `${load} (on ${availableParallelism()} cores)`;
}

/** A rate as a whole number with thousands separators. */
export const rate = (n: number) => Math.round(n).toLocaleString('en-US');

/** Milliseconds with two decimals. */
export const ms = (n: number) => n.toFixed(2);
