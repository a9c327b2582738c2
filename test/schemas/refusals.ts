/**
 * Test support for schema suites: parse a value and answer what a 400 problem would name,
 * through the same `toFieldErrors` the error handler uses.
 */
import type { z } from 'zod';
import type { FieldError } from '../../src/schemas/problem.ts';
import { toFieldErrors, type RequestPart } from '../../src/schemas/issues.ts';

/** The failed fields of `value` under `schema`; empty when the value is accepted. */
export function refusals(
  schema: z.ZodType,
  value: unknown,
  part: RequestPart = 'body',
): FieldError[] {
  const result = schema.safeParse(value);
  return result.success ? [] : toFieldErrors(result.error, part);
}

/** The parsed value; fails the test naming every refused field when it does not parse. */
export function accepted<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new Error(`refused: ${JSON.stringify(toFieldErrors(result.error, 'body'))}`);
  }
  return result.data;
}

/** A copy of `base` with `path` set to `value` (`['tools', 0, 'name']`). */
export function withValue(
  base: unknown,
  path: readonly (string | number)[],
  value: unknown,
): unknown {
  const copy: unknown = structuredClone(base);
  let node = copy as Record<string | number, unknown>;
  path.slice(0, -1).forEach((key) => {
    node = node[key] as Record<string | number, unknown>;
  });
  const last = path.at(-1);
  if (last === undefined) return value;
  if (value === undefined) {
    // Deleting is the point: the key must be absent, not present and undefined.
    // eslint-disable-next-line @typescript-eslint/no-dynamic-delete
    delete node[last];
  } else {
    node[last] = value;
  }
  return copy;
}
