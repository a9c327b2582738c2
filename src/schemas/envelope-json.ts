/**
 * The JSON text of landed envelopes (2.2), as the append answers them (4.2).
 *
 * Each envelope is copied into a plain object whose fields are in the order of the
 * `Envelope` schema, which is what the route's zod serializer gave (encode, then
 * `JSON.stringify`), and the array is handed to `JSON.stringify` once: the same text,
 * byte for byte, a property test holds the two together. The zod pass re-checked
 * envelopes the log store has just built, and it and a generic `JSON.stringify` were a
 * tenth of an append of 100 records (`npm run bench`); writing the text field by field
 * by concatenation then cost as much time and twice the garbage (every part of every
 * envelope an intermediate string), which on batches of 100 is what the young generation
 * fills with while appends wait for the store. The copy is made rather than trusting the
 * store's objects' own order, which the stores do not promise. A field added to
 * `Envelope` must be added here: the test fails until it is.
 */
import type { Envelope } from './records.ts';

/** `envelope` with its fields in the schema's order, and nothing else. */
function ordered(envelope: Envelope): Envelope {
  return {
    at: envelope.at,
    cursor: envelope.cursor,
    idem: envelope.idem,
    kind: { name: envelope.kind.name, version: envelope.kind.version },
    producer: envelope.producer,
    size: envelope.size,
    stream: envelope.stream,
    to: envelope.to,
  };
}

/** The JSON array of `envelopes`, as `JSON.stringify(AppendAnswer.encode(envelopes))`. */
export function envelopesJson(envelopes: readonly Envelope[]): string {
  return JSON.stringify(envelopes.map(ordered));
}
