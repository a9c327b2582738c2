/**
 * Durations on the wire are Go duration strings (`100ms`, `1m30s`, `1.5h`): decisions
 * rows 18 and 50 give `retry.backoff` and tool and connection `timeout` one grammar.
 *
 * `parseDuration` reads the grammar of Go's `time.ParseDuration` into milliseconds;
 * `boundedDuration` is the zod schema for a field with bounds, which keeps the
 * grammar as a JSON Schema `pattern` and the bounds in its description.
 */
import { z } from 'zod';

/** Milliseconds per unit, as Go names them (`µs` in both its Unicode spellings). */
const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** One `<number><unit>` element; longer unit spellings first so `ms` never reads as `m`. */
const ELEMENT = /([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)/y;

/** Go's ceiling: an int64 count of nanoseconds, about 292 years. */
const MAX_MS = 9_223_372_036_854;

/** The grammar as a JSON Schema pattern (unsigned: no bounded field takes a negative span). */
export const DURATION_PATTERN =
  /^(?:0|(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+)$/;

/**
 * Reads a Go duration string into milliseconds, or null when it does not parse.
 *
 * Follows `time.ParseDuration`: an optional sign, then one or more decimal numbers each
 * with a unit (`ns`, `us`, `µs`, `ms`, `s`, `m`, `h`), or a bare `0`. Sub-millisecond
 * units give fractional milliseconds. Spans beyond Go's int64 nanoseconds are refused.
 */
export function parseDuration(text: string): number | null {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest.startsWith('-') ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return null;
  let total = 0;
  ELEMENT.lastIndex = 0;
  while (ELEMENT.lastIndex < rest.length) {
    const match = ELEMENT.exec(rest);
    if (match === null) return null;
    const [, amount = '', unit = ''] = match;
    const perUnit = UNIT_MS[unit];
    if (perUnit === undefined) return null;
    total += Number(amount) * perUnit;
  }
  if (!Number.isFinite(total) || total > MAX_MS) return null;
  return sign * total;
}

/** Inclusive bounds of a duration field, in milliseconds, with the spellings shown to callers. */
export interface DurationBounds {
  readonly min: number;
  readonly max: number;
  /** The bounds as the interface writes them, e.g. `100ms` and `1m`. */
  readonly minText: string;
  readonly maxText: string;
}

/** 2.13 and §8: `retry.backoff` is 100ms to 1m. */
export const BACKOFF_BOUNDS: DurationBounds = {
  min: 100,
  max: 60_000,
  minText: '100ms',
  maxText: '1m',
};

/** Decisions row 18: tool and connection `timeout` is 1s to 15m (null means 60s). */
export const TIMEOUT_BOUNDS: DurationBounds = {
  min: 1000,
  max: 900_000,
  minText: '1s',
  maxText: '15m',
};

/** Decisions row 18: the timeout of a tool or connection whose `timeout` is null. */
export const DEFAULT_TIMEOUT_MS = 60_000;

/** True when `text` parses and lies within `bounds`. */
export function isWithin(text: string, bounds: DurationBounds): boolean {
  const ms = parseDuration(text);
  return ms !== null && ms >= bounds.min && ms <= bounds.max;
}

/**
 * A duration string within `bounds`: the pattern refuses what is not a duration, the
 * refinement what is out of bounds, each with a reason a caller can act on. The
 * refinement leaves no trace in JSON Schema, so the bounds are in the description.
 */
export function boundedDuration(bounds: DurationBounds) {
  const range = `${bounds.minText} to ${bounds.maxText}`;
  return z
    .string()
    .regex(DURATION_PATTERN, { error: `must be a duration such as 100ms or 1m30s, from ${range}` })
    .refine((text) => isWithin(text, bounds), {
      error: `must be a duration from ${range}`,
      // Only judge the bounds of something that is a duration at all.
      when: (payload) => payload.issues.length === 0,
    })
    .meta({ description: `A Go duration string (\`100ms\`, \`1m30s\`) from ${range}.` });
}
