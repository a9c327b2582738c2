/**
 * The JSON text of landed envelopes (2.2), as the append answers them (4.2).
 *
 * Written field by field in the order of the `Envelope` schema, which is what the route's
 * zod serializer gave (encode, then `JSON.stringify`): the same text, byte for byte, a
 * property test holds the two together. The zod pass re-checked envelopes the log store
 * has just built, and it and a generic `JSON.stringify` were a tenth of an append of
 * 100 records (`npm run bench`); a batch repeats its producer and stream in every
 * envelope, so their JSON is made once. A field added to `Envelope` must be added here:
 * the test fails until it is.
 */
import type { Envelope } from './records.ts';

/** JSON of a string, or of null. */
function text(value: string | null): string {
  return value === null ? 'null' : JSON.stringify(value);
}

/** JSON of a number as `JSON.stringify` writes it (null when not finite). */
function number(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

/** The JSON array of `envelopes`, as `JSON.stringify(AppendAnswer.encode(envelopes))`. */
export function envelopesJson(envelopes: readonly Envelope[]): string {
  let json = '[';
  let producer: string | undefined;
  let producerJson = '';
  let stream: string | undefined;
  let streamJson = '';
  for (const [index, envelope] of envelopes.entries()) {
    if (envelope.producer !== producer) {
      producer = envelope.producer;
      producerJson = text(producer);
    }
    if (envelope.stream !== stream) {
      stream = envelope.stream;
      streamJson = text(stream);
    }
    json +=
      `${index === 0 ? '' : ','}{"at":${number(envelope.at)},"cursor":${number(envelope.cursor)}` +
      `,"idem":${text(envelope.idem)},"kind":{"name":${text(envelope.kind.name)}` +
      `,"version":${number(envelope.kind.version)}},"producer":${producerJson}` +
      `,"size":${number(envelope.size)},"stream":${streamJson},"to":${text(envelope.to)}}`;
  }
  return `${json}]`;
}
