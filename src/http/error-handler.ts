/**
 * The one error handler: every failure leaves as an RFC 9457 problem (decisions row 82).
 *
 * Service errors pass as they are. Fastify's own failures are mapped to the documented
 * categories so that no bad input ever answers 500: a body that is not JSON names where
 * it broke (`json-body.ts`), a wrong content type is 415, an oversized body 413, schema failures 400 with
 * the field and reason. A store that does not answer (a lost, refused or timed-out
 * connection to Redis or PostgreSQL) is 503 with `Retry-After`, whichever code met it:
 * the stores raise `Unavailable` themselves, and a client error that escaped them is
 * recognised here. Anything else is our fault: logged whole, answered
 * as a bare 500.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  InvalidRequest,
  NotFound,
  PayloadTooLarge,
  ServiceError,
  Unavailable,
  UnsupportedMediaType,
} from '../errors.ts';
import type { FieldError } from '../schemas/problem.ts';
import { isRedisUnavailable } from '../storage/redis/failures.ts';
import { isPostgresUnavailable } from '../storage/sql/postgres-driver.ts';
import { sendProblem } from './problem.ts';

class InternalError extends ServiceError {}

const PARTS: Readonly<Record<string, string>> = {
  body: 'body',
  querystring: 'query',
  params: 'params',
  headers: 'headers',
};

/** `body.tools.3.name` from a JSON pointer and the part of the request it points into. */
function fieldPath(part: string, pointer: string): string {
  const segments = pointer.split('/').filter((segment) => segment !== '');
  return [part, ...segments].join('.');
}

function validationError(error: FastifyError): InvalidRequest {
  const part = PARTS[error.validationContext ?? 'body'] ?? 'body';
  // Zod issues arrive in Fastify's shape (fastify-type-provider-zod): a JSON pointer each.
  const errors: FieldError[] = (error.validation ?? []).map((issue) => ({
    field: fieldPath(part, issue.instancePath),
    reason: issue.message ?? 'is invalid',
  }));
  const first = errors[0] ?? { field: part, reason: 'is invalid' };
  return new InvalidRequest('invalid_request', `${first.field} ${first.reason}`, {
    field: first.field,
    reason: first.reason,
    errors,
  });
}

/** Maps anything thrown on a request to a service error. */
export function toServiceError(error: unknown): ServiceError {
  if (error instanceof ServiceError) return error;
  if (!(error instanceof Error)) return new InternalError('internal', 'internal error');
  const fastifyError = error as FastifyError;
  if (fastifyError.validation !== undefined) return validationError(fastifyError);
  if (isRedisUnavailable(error) || isPostgresUnavailable(error)) {
    return new Unavailable('store_unavailable', 'a store does not answer', { cause: error });
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return new UnsupportedMediaType(
        'unsupported_media_type',
        'the body must be application/json',
        {
          field: 'headers.content-type',
          reason: 'must be application/json',
        },
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PayloadTooLarge('payload_too_large', 'the request body is over its size limit', {
        field: 'body',
        reason: 'over the request size limit',
      });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new InvalidRequest('malformed_json', 'the JSON body is empty', {
        field: 'body',
        reason: 'is empty',
      });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new InvalidRequest('invalid_request', 'Content-Length does not match the body', {
        field: 'headers.content-length',
        reason: 'does not match the body',
      });
    default:
      break;
  }
  const status = fastifyError.statusCode ?? 500;
  if (status === 404) return new NotFound('not_found', error.message);
  if (status >= 400 && status < 500) {
    return new InvalidRequest('invalid_request', error.message, { reason: error.message });
  }
  return new InternalError('internal', 'internal error', { cause: error });
}

/** The problem-shaped 404 of an unknown route. */
export function notFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendProblem(
    reply,
    new NotFound(
      'route_not_found',
      `no route ${request.method} ${request.url.split('?')[0] ?? ''}`,
    ),
  );
}

/**
 * Installs the one error handler; `failed` hears every answer of 500 or more (the
 * metrics count the stores' failures among them).
 */
export function installErrorHandling(
  app: FastifyInstance,
  failed: (error: ServiceError) => void = () => undefined,
): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const mapped = toServiceError(error);
    if (mapped.status >= 500) failed(mapped);
    // A store outage answers every request 503 while it lasts: one line each, no stack.
    if (mapped.status === 503) {
      request.log.warn({ code: mapped.code, reason: mapped.message }, 'request failed');
    } else if (mapped.status >= 500) request.log.error({ err: error }, 'request failed');
    return sendProblem(reply, mapped);
  });
}
