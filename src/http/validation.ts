/**
 * The request validator: zod schemas from the route, failures as a 400 `InvalidRequest`
 * naming every failed field with a reason a caller can act on (decisions row 82).
 *
 * fastify-type-provider-zod's stock compiler flattens zod issues into Ajv-shaped objects
 * and loses the readable reasons `toFieldErrors` gives, so we compile our own; the
 * error handler passes the resulting `ServiceError` through unchanged.
 */
import type { FastifySchemaCompiler } from 'fastify';
import type { z } from 'zod';
import { InvalidRequest } from '../errors.ts';
import { toFieldErrors, type RequestPart } from '../schemas/issues.ts';

const PARTS: Readonly<Record<string, RequestPart>> = {
  body: 'body',
  querystring: 'query',
  params: 'params',
  headers: 'headers',
};

/** Fastify validator compiler over zod schemas. */
export const validatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema, httpPart }) =>
  (data) => {
    const result = schema.safeParse(data);
    if (result.success) return { value: result.data };
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
