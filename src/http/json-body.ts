/**
 * The JSON body parser. Fastify's own parser answers a bare "Body is not valid JSON";
 * ours keeps where the text broke, so a 400 can name the position, and
 * refuses `__proto__`/`constructor.prototype` keys as Fastify does (prototype poisoning).
 *
 * A body nested deeper than `MAX_JSON_DEPTH` is refused once parsed: everything
 * downstream (zod, RFC 8785 canonical form, the faces) walks values recursively, and a
 * body of ten thousand nested arrays would end in a stack overflow, a 500, instead of a
 * 400 naming the body. V8's parser itself has no recursion limit, so the depth is checked
 * on the parsed value (a walk of its containers, which stops at the bound) and the text is
 * scanned for the offending bracket only to name it, on a refusal: scanning every body's
 * text first cost as much as a third of the parse on batches of 100 (`npm run bench`).
 */
import type { FastifyInstance } from 'fastify';
import sjson from 'secure-json-parse';
import { InvalidRequest } from '../errors.ts';

/** The deepest nesting of objects and arrays a JSON body may have (the top level is 1). */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * The offset of the first opening bracket that goes deeper than `max`, or -1. One pass
 * over the text that skips strings; it does not validate (the parser does that next).
 */
export function tooDeepAt(text: string, max = MAX_JSON_DEPTH): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i += 1;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth += 1;
      if (depth > max) return i;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth -= 1;
    }
  }
  return -1;
}

/**
 * True when `value` nests objects and arrays deeper than `room` levels. Recursion is
 * bounded by `room`: it stops one level past the bound.
 */
function deeperThan(value: unknown, room: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (room === 0) return true;
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) if (deeperThan(item, room - 1)) return true;
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) if (deeperThan(record[key], room - 1)) return true;
  return false;
}

/** Where a JSON parse failed, from the engine's message (`… at position 12 (line 1 column 13)`). */
function malformed(error: unknown): InvalidRequest {
  const reason = error instanceof Error ? error.message : String(error);
  const position = /position (\d+)/.exec(reason)?.[1];
  const where = position === undefined ? 'the request body' : `position ${position}`;
  return new InvalidRequest('malformed_json', `the body is not valid JSON at ${where}`, {
    field: 'body',
    reason,
    extensions: position === undefined ? {} : { position: Number(position) },
  });
}

function tooDeep(position: number): InvalidRequest {
  return new InvalidRequest(
    'too_deep',
    `the body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels`,
    {
      field: 'body',
      reason: `is nested deeper than ${MAX_JSON_DEPTH} levels`,
      extensions: { position, max_depth: MAX_JSON_DEPTH },
    },
  );
}

/** Replaces the `application/json` parser of `app`. */
export function installJsonBody(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(
        new InvalidRequest('malformed_json', 'the JSON body is empty', {
          field: 'body',
          reason: 'is empty',
        }),
      );
      return;
    }
    let value: unknown;
    try {
      value = sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
    } catch (error) {
      // A body too deep to scan for poisoned keys (or also broken) is named for its depth,
      // as one refused before parsing would be.
      const deep = tooDeepAt(text);
      done(deep >= 0 ? tooDeep(deep) : malformed(error));
      return;
    }
    if (deeperThan(value, MAX_JSON_DEPTH)) {
      done(tooDeep(tooDeepAt(text)));
      return;
    }
    done(null, value);
  });
}
