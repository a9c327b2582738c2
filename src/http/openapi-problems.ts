/**
 * The examples of the OpenAPI document's problem answers (RFC 9457,
 * `application/problem+json`): by component for the problems with members of their own,
 * by status for the plain `Problem`. Codes and messages are ones the service answers.
 */
import { EXAMPLE_INSTALL, EXAMPLE_SESSION } from './openapi-examples.ts';

const PROBLEM_BASE = { type: 'about:blank', instance: `/sessions/${EXAMPLE_SESSION}/events` };

/** Examples of the problems with members of their own, by component name. */
export const PROBLEM_COMPONENT_EXAMPLES: Readonly<Record<string, unknown>> = {
  FilterRefusedProblem: {
    ...PROBLEM_BASE,
    title: 'Forbidden',
    status: 403,
    detail:
      'record 0 is refused: principal:ada may land message.submitted@1 and turn.cancel@1 only, not turn.started@1',
    code: 'filter_refused',
    message:
      'record 0 is refused: principal:ada may land message.submitted@1 and turn.cancel@1 only, not turn.started@1',
    index: 0,
    kind: { name: 'turn.started', version: 1 },
    reason: 'principal:ada may land message.submitted@1 and turn.cancel@1 only, not turn.started@1',
  },
  PollProblem: {
    type: 'about:blank',
    title: 'Bad Request',
    status: 400,
    detail: 'the owner has not consented yet',
    code: 'authorization_pending',
    message: 'the owner has not consented yet',
    error: 'authorization_pending',
  },
  AlreadyGrantedProblem: {
    type: 'about:blank',
    title: 'Conflict',
    status: 409,
    detail: 'the request was granted already',
    code: 'already_granted',
    message: 'the request was granted already',
    install: EXAMPLE_INSTALL,
  },
  SecretInUseProblem: {
    type: 'about:blank',
    title: 'Conflict',
    status: 409,
    detail: 'the secret helpdesk-token is still referenced',
    code: 'secret_in_use',
    message: 'the secret helpdesk-token is still referenced',
    connections: ['helpdesk'],
    inferences: [],
  },
  InUseByInstallsProblem: {
    type: 'about:blank',
    title: 'Conflict',
    status: 409,
    detail: `connection helpdesk is still used by installs ${EXAMPLE_INSTALL}`,
    code: 'connection_in_use',
    message: `connection helpdesk is still used by installs ${EXAMPLE_INSTALL}`,
    installs: [EXAMPLE_INSTALL],
  },
  CatalogChangedProblem: {
    type: 'about:blank',
    title: 'Conflict',
    status: 409,
    detail: 'the catalog of helpdesk changed since it was linked; link it again',
    code: 'catalog_changed',
    message: 'the catalog of helpdesk changed since it was linked; link it again',
    connections: ['helpdesk'],
  },
};

/** A plain problem of `status` with `code` and `message`. */
function problem(status: number, title: string, code: string, message: string, extra = {}) {
  return { ...PROBLEM_BASE, title, status, detail: message, code, message, ...extra };
}

/** Examples of plain problems, by status. */
export const PROBLEM_EXAMPLES: Readonly<Record<string, unknown>> = {
  400: problem(
    400,
    'Bad Request',
    'invalid_request',
    'body.0.kind.name: must be dotted lowercase segments such as message.submitted (a-z, 0-9, _)',
    {
      field: 'body.0.kind.name',
      reason: 'must be dotted lowercase segments such as message.submitted (a-z, 0-9, _)',
    },
  ),
  401: problem(401, 'Unauthorized', 'invalid_token', 'the token does not verify'),
  403: problem(403, 'Forbidden', 'does_not_attach', 'the token does not attach to this session'),
  404: problem(404, 'Not Found', 'session_not_found', 'no such session'),
  409: problem(409, 'Conflict', 'session_archived', 'the session is archived'),
  413: problem(
    413,
    'Payload Too Large',
    'payload_too_large',
    'the request body is over its size limit',
  ),
  415: problem(
    415,
    'Unsupported Media Type',
    'unsupported_media_type',
    'the body must be application/json',
    {
      field: 'headers.content-type',
      reason: 'must be application/json',
    },
  ),
  429: problem(
    429,
    'Too Many Requests',
    'rate_limited',
    'over 100 requests a second; retry in 1 s',
  ),
  502: problem(
    502,
    'Bad Gateway',
    'upstream_unreachable',
    'MCP server at https://mcp.helpdesk.example/mcp did not answer',
  ),
  503: problem(503, 'Service Unavailable', 'store_unavailable', 'a store does not answer'),
};
