/**
 * The request validator: zod schemas from the route, failures as a 400 `InvalidRequest`
 * naming every failed field with a reason a caller can act on (decisions row 82).
 *
 * fastify-type-provider-zod's stock compiler flattens zod issues into Ajv-shaped objects
 * and loses the readable reasons `toFieldErrors` gives, so we compile our own; the
 * error handler passes the resulting `ServiceError` through unchanged.
 */
import type { FastifySchemaCompiler } from 'fastify';
import { z } from 'zod';
import { InvalidRequest } from '../errors.ts';
import { toFieldErrors, type RequestPart } from '../schemas/issues.ts';

const PARTS: Readonly<Record<string, RequestPart>> = {
  body: 'body',
  querystring: 'query',
  params: 'params',
  headers: 'headers',
};

/**
 * The headers a header schema names, taken from all of them. Header schemas check, never
 * transform (they are loose objects of strings), so only the named headers need parsing.
 */
function namedHeaders(schema: z.ZodObject, data: unknown): Record<string, unknown> {
  const headers = (data ?? {}) as Record<string, unknown>;
  const named: Record<string, unknown> = {};
  for (const name of Object.keys(schema.shape)) {
    if (name in headers) named[name] = headers[name];
  }
  return named;
}

/**
 * Fastify validator compiler over zod schemas.
 *
 * Headers are checked but not replaced: once a validator hands Fastify new headers, its
 * `request.headers` getter copies every header on each read (`npm run bench`: a few µs
 * per append), and the checked values are the strings already there.
 */
export const validatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => {
  const headers = httpPart === 'headers' && schema instanceof z.ZodObject ? schema : undefined;
  return (data) => {
    const result = schema.safeParse(headers === undefined ? data : namedHeaders(headers, data));
    if (result.success) return headers === undefined ? { value: result.data } : {};
    const errors = toFieldErrors(result.error, PARTS[httpPart ?? 'body'] ?? 'body');
    const first = errors[0] ?? { field: httpPart ?? 'body', reason: 'is invalid' };
    return {
      error: new InvalidRequest('invalid_request', `${first.field} ${first.reason}`, {
        field: first.field,
        reason: first.reason,
        errors,
      }),
    };
  };
};
