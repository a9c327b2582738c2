import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toFieldErrors, type RequestPart } from '../../src/schemas/issues.ts';

/** The field errors of a value that must fail. */
function fail(schema: z.ZodType, value: unknown, part: RequestPart = 'body') {
  const result = schema.safeParse(value);
  if (result.success) throw new Error('expected a refusal');
  return toFieldErrors(result.error, part);
}

describe('toFieldErrors', () => {
  it('writes dotted paths under the request part', () => {
    const schema = z.object({ tools: z.array(z.object({ name: z.string() })) });
    expect(fail(schema, { tools: [{ name: 'a' }, {}] })).toEqual([
      { field: 'body.tools.1.name', reason: 'is required' },
    ]);
    expect(fail(z.object({ limit: z.number() }), { limit: 'x' }, 'query')).toEqual([
      { field: 'query.limit', reason: 'must be a number' },
    ]);
    expect(fail(z.string(), 1, 'headers')).toEqual([
      { field: 'headers', reason: 'must be a string' },
    ]);
  });

  it('places a nested parse with at', () => {
    const result = z.object({ text: z.string() }).safeParse({});
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(toFieldErrors(result.error, 'body', [3, 'body'])).toEqual([
      { field: 'body.3.body.text', reason: 'is required' },
    ]);
  });

  it.each([
    [z.string().max(3), 'abcd', 'must be at most 3 characters'],
    [z.string().min(1), '', 'must not be empty'],
    [z.string().min(2), 'a', 'must be at least 2 characters'],
    [z.string().length(2), 'a', 'must be exactly 2 characters'],
    [z.array(z.number()).max(1), [1, 2], 'must hold at most 1 item'],
    [z.array(z.number()).min(1), [], 'must hold at least 1 item'],
    [z.number().max(5), 6, 'must be at most 5'],
    [z.number().lt(5), 5, 'must be less than 5'],
    [z.number().gt(0), 0, 'must be more than 0'],
    [z.number().int(), 1.5, 'must be an integer'],
    [z.number().multipleOf(5), 7, 'must be a multiple of 5'],
    [z.boolean(), 'yes', 'must be true or false'],
    [z.enum(['a', 'b']), 'c', 'must be one of a, b'],
    [z.literal(1), 2, 'must be 1'],
    [z.url(), 'nope', 'must be a URL'],
    [z.iso.date(), '2024-13-01', 'must be a day written YYYY-MM-DD'],
    [z.string().regex(/^x+$/), 'y', 'must match /^x+$/'],
    [z.array(z.string()), {}, 'must be an array'],
    [z.object({}), [], 'must be an object'],
    [z.string().refine(() => false), 'a', 'is invalid'],
  ])('words zod stock issue %# plainly', (schema, value, reason) => {
    expect(fail(schema, value)).toEqual([{ field: 'body', reason }]);
  });

  it('keeps the reasons schemas set themselves', () => {
    const schema = z.object({ n: z.number().max(5, { error: 'is over five' }) });
    expect(fail(schema, { n: 6 })).toEqual([{ field: 'body.n', reason: 'is over five' }]);
  });

  it('names each unknown key of a strict object', () => {
    expect(fail(z.strictObject({ a: z.string() }), { a: 'x', b: 1, c: 2 })).toEqual([
      { field: 'body.b', reason: 'is not an accepted field' },
      { field: 'body.c', reason: 'is not an accepted field' },
    ]);
  });

  it('names the discriminator of a discriminated union', () => {
    const schema = z.discriminatedUnion('type', [
      z.object({ type: z.literal('a'), x: z.string() }),
      z.object({ type: z.literal('b'), y: z.number() }),
    ]);
    expect(fail(schema, { type: 'c' })).toEqual([
      { field: 'body.type', reason: 'must be one of a, b' },
    ]);
    expect(fail(schema, { type: 'b', y: 'no' })).toEqual([
      { field: 'body.y', reason: 'must be a number' },
    ]);
  });

  it('follows the one union branch that got deepest into the input', () => {
    const schema = z.union([z.string(), z.object({ inner: z.object({ n: z.number() }) })]);
    expect(fail(schema, { inner: { n: 'x' } })).toEqual([
      { field: 'body.inner.n', reason: 'must be a number' },
    ]);
  });

  it('speaks for the value when no branch got further than another', () => {
    const schema = z.object({ v: z.union([z.string(), z.number()]) });
    expect(fail(schema, { v: true })).toEqual([
      { field: 'body.v', reason: 'does not match any accepted shape' },
    ]);
    expect(fail(schema, {})).toEqual([{ field: 'body.v', reason: 'is required' }]);
    const tied = z.union([z.object({ a: z.string() }), z.object({ b: z.string() })], {
      error: 'must carry a or b',
    });
    expect(fail(tied, {})).toEqual([{ field: 'body', reason: 'must carry a or b' }]);
  });

  it('reports each failed field once, in order', () => {
    const schema = z.object({ a: z.string(), b: z.number() });
    expect(fail(schema, { a: 1, b: 'x' })).toEqual([
      { field: 'body.a', reason: 'must be a string' },
      { field: 'body.b', reason: 'must be a number' },
    ]);
  });
});
