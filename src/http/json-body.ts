/**
 * The JSON body parser. Fastify's own parser answers a bare "Body is not valid JSON";
 * ours keeps where the text broke, so a 400 can name the position, and
 * refuses `__proto__`/`constructor.prototype` keys as Fastify does (prototype poisoning).
 *
 * A body nested deeper than `MAX_JSON_DEPTH` is refused before it is parsed:
 * everything downstream (zod, RFC 8785 canonical form, the faces) walks values
 * recursively, and a body of ten thousand nested arrays would end in a stack overflow, a
 * 500, instead of a 400 naming the body.
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
    const deep = tooDeepAt(text);
    if (deep >= 0) {
      done(tooDeep(deep));
      return;
    }
    try {
      done(
        null,
        sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }),
      );
    } catch (error) {
      done(malformed(error));
    }
  });
}
