import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { envelopesJson } from '../../src/schemas/envelope-json.ts';
import { AppendAnswer, type Envelope } from '../../src/schemas/records.ts';

/** What the append route's zod serializer wrote before `envelopesJson`. */
function zodJson(envelopes: readonly Envelope[]): string {
  return JSON.stringify(AppendAnswer.encode([...envelopes]));
}

const anyText = fc.string({ unit: 'binary', maxLength: 40 });
const envelope = fc.record({
  at: fc.integer({ min: 0, max: 2 ** 52 }),
  cursor: fc.integer({ min: 1, max: 2 ** 52 }),
  idem: fc.option(anyText, { nil: null }),
  kind: fc.record({
    name: fc.constantFrom('message.submitted', 'turn.cancel', 'invoke.completed'),
    version: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  }),
  producer: fc.oneof(fc.constantFrom('principal:ada', 'console:u1'), anyText),
  size: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  stream: fc.oneof(fc.constant('a'.repeat(72)), fc.stringMatching(/^[0-9a-f]{72}$/)),
  to: fc.option(anyText, { nil: null }),
});

describe('envelopesJson', () => {
  it('writes what the zod serializer wrote, byte for byte', () => {
    fc.assert(
      fc.property(fc.array(envelope, { maxLength: 6 }), (envelopes) => {
        expect(envelopesJson(envelopes)).toBe(zodJson(envelopes));
      }),
      { numRuns: 400 },
    );
  });

  it('writes batches as a store lands them, sharing all but cursor, idem and size', () => {
    // One `at`, stream, producer and `to`, often one kind; some envelopes differ in one.
    const batch = fc
      .record({
        like: envelope,
        rest: fc.array(
          fc.record({
            cursor: envelope.map((e) => e.cursor),
            idem: envelope.map((e) => e.idem),
            size: envelope.map((e) => e.size),
            other: fc.option(envelope, { nil: undefined }),
            field: fc.constantFrom('at', 'kind', 'producer', 'stream', 'to'),
          }),
          { maxLength: 12 },
        ),
      })
      .map(({ like, rest }) =>
        rest.map(({ cursor, idem, size, other, field }): Envelope => {
          const own = { ...like, cursor, idem, size };
          return other === undefined ? own : { ...own, [field]: other[field] };
        }),
      );
    fc.assert(
      fc.property(batch, (envelopes) => {
        expect(envelopesJson(envelopes)).toBe(zodJson(envelopes));
      }),
      { numRuns: 400 },
    );
  });

  it('writes the same text whatever order the store built the fields in', () => {
    fc.assert(
      fc.property(fc.array(envelope, { maxLength: 6 }), (envelopes) => {
        const reordered = envelopes.map((built) => {
          const kind = Object.fromEntries(Object.entries(built.kind).reverse());
          return Object.fromEntries(
            Object.entries({ ...built, kind }).reverse(),
          ) as unknown as Envelope;
        });
        expect(envelopesJson(reordered)).toBe(zodJson(envelopes));
      }),
      { numRuns: 200 },
    );
  });

  it('writes every field of the schema, and only those', () => {
    const landed: Envelope = {
      at: 1_700_000_000_000,
      cursor: 7,
      idem: 'k:0',
      kind: { name: 'message.submitted', version: 1 },
      producer: 'principal:ada',
      size: 16,
      stream: 'f'.repeat(72),
      to: null,
    };
    const parsed = JSON.parse(envelopesJson([landed, { ...landed, cursor: 8 }])) as unknown[];
    expect(parsed).toEqual([landed, { ...landed, cursor: 8 }]);
    expect(Object.keys(parsed[0] as object)).toEqual(Object.keys(AppendAnswer.element.shape));
    expect(envelopesJson([])).toBe('[]');
  });
});
