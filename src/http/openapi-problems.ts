/**
 * The examples of the OpenAPI document's problem answers (RFC 9457,
 * `application/problem+json`): by component for the problems with members of their own,
 * by status for the plain `Problem`. Codes and messages are ones the service answers.
 */
import { STATUS_CODES } from 'node:http';
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

/** What a plain problem says: its code and message, and the field at fault if one is. */
type Said = readonly [code: string, message: string, field?: string, reason?: string];

/** Plain problems every route family answers alike, by status. */
const COMMON: Readonly<Record<string, Said>> = {
  400: ['invalid_request', 'body.name: must not be empty', 'body.name', 'must not be empty'],
  401: ['invalid_token', 'the token does not verify'],
  403: ['not_owner', 'only an owner of tenant acme may do this'],
  404: ['not_found', 'nothing by that name is visible to the caller'],
  409: ['version_conflict', 'connection helpdesk moved on from version 3'],
  413: ['payload_too_large', 'the request body is over its size limit'],
  415: [
    'unsupported_media_type',
    'the body must be application/json',
    'headers.content-type',
    'must be application/json',
  ],
  429: ['rate_limited', 'over 100 requests a second; retry in 1 s'],
  502: ['upstream_unreachable', 'MCP server at https://mcp.helpdesk.example/mcp did not answer'],
  503: ['store_unavailable', 'a store does not answer'],
};

/** What differs for a family of paths, by the path's first segments. */
const FAMILIES: readonly (readonly [string, Readonly<Record<string, Said>>])[] = [
  [
    '/sessions/',
    {
      400: [
        'invalid_request',
        'body.0.kind.name: must be dotted lowercase segments such as message.submitted (a-z, 0-9, _)',
        'body.0.kind.name',
        'must be dotted lowercase segments such as message.submitted (a-z, 0-9, _)',
      ],
      403: ['does_not_attach', 'the token does not attach to this session'],
      404: ['session_not_found', 'no such session'],
      409: ['session_archived', 'the session is archived'],
    },
  ],
  [
    '/console/sessions/',
    {
      404: ['session_not_found', 'no such session under this tenant'],
      409: ['session_archived', 'the session is archived'],
    },
  ],
  ['/secrets/', { 404: ['secret_not_found', 'the tenant holds no secret named helpdesk-token'] }],
  [
    '/inferences/',
    { 404: ['inference_not_found', 'the tenant has no inference option named default'] },
  ],
  ['/installs/', { 404: ['no_such_install', 'the tenant has no such install'] }],
  [
    '/consent/',
    {
      404: ['no_such_request', 'no proposal by that request'],
      409: ['request_declined', 'an owner of the tenant declined the request already'],
    },
  ],
];

/**
 * The example of a plain problem of `status` answered at `path` (a path with its
 * parameters filled in), or undefined for a status no route answers.
 */
export function plainProblem(status: string, path: string): unknown {
  const family = FAMILIES.find(([prefix]) => path.startsWith(prefix))?.[1];
  const said = family?.[status] ?? COMMON[status];
  if (said === undefined) return undefined;
  const [code, message, field, reason] = said;
  return {
    type: 'about:blank',
    title: STATUS_CODES[Number(status)] ?? 'Error',
    status: Number(status),
    detail: message,
    instance: path,
    code,
    message,
    ...(field === undefined ? {} : { field, reason }),
  };
}
