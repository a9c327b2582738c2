/**
 * The JSON body parser. Fastify's own parser answers a bare "Body is not valid JSON";
 * ours keeps where the text broke, so a 400 can name the position (issue 2 item 5), and
 * refuses `__proto__`/`constructor.prototype` keys as Fastify does (prototype poisoning).
 */
import type { FastifyInstance } from 'fastify';
import sjson from 'secure-json-parse';
import { InvalidRequest } from '../errors.ts';

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
