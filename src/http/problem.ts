/**
 * RFC 9457 problem bodies (decisions rows 2, 59, 82): `application/problem+json` with the
 * standard members plus `code`, `message` and, where known, `field`, `reason`, `errors`
 * and the documented extension members.
 */
import { STATUS_CODES } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { ProblemExtensions, ServiceError } from '../errors.ts';
import type { Problem } from '../schemas/problem.ts';

export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

/** The wire shape of a problem body: the `Problem` schema plus its extension members. */
type ProblemBody = Readonly<Problem> & ProblemExtensions;

/** The problem body of a service error; extension members never shadow standard ones. */
export function problemOf(error: ServiceError, instance?: string): ProblemBody {
  return {
    ...error.extensions,
    type: 'about:blank',
    title: STATUS_CODES[error.status] ?? 'Error',
    status: error.status,
    detail: error.message,
    ...(instance === undefined ? {} : { instance }),
    code: error.code,
    message: error.message,
    ...(error.field === undefined ? {} : { field: error.field }),
    ...(error.reason === undefined ? {} : { reason: error.reason }),
    ...(error.errors === undefined ? {} : { errors: [...error.errors] }),
  };
}

/** Sends a service error as its problem body with the headers it carries. */
export function sendProblem(reply: FastifyReply, error: ServiceError): FastifyReply {
  if (error.headers !== undefined) void reply.headers(error.headers);
  return reply
    .code(error.status)
    .type(PROBLEM_MEDIA_TYPE)
    .serializer(JSON.stringify)
    .send(problemOf(error, reply.request.url.split('?')[0]));
}
