/**
 * Problem answers for route schemas: each status a route can answer, with its media type
 * `application/problem+json` (decisions row 2), so the OpenAPI document names them all.
 */
import { STATUS_CODES } from 'node:http';
import { ERROR_CODE_NAMES, statusOf, type ErrorStatus } from '../error-codes.ts';
import { Problem } from '../schemas/problem.ts';
import { PROBLEM_MEDIA_TYPE } from './problem.ts';

/** The statuses a route documents: the catalog's, less the 500 no route promises. */
type ProblemStatus = Exclude<ErrorStatus, 500>;

/** What each problem status means across the API (interface section 7). */
const MEANING: Readonly<Record<ProblemStatus, string>> = {
  400: 'Invalid request: the problem names the field and reason.',
  401: 'No credential, or one that does not verify (`WWW-Authenticate: Bearer`).',
  403: 'The credential may not do this.',
  404: 'Nothing by that name is visible to the caller.',
  409: 'The request collides with the resource state.',
  413: 'The request or a record is over its size limit.',
  415: 'The body is not `application/json`.',
  429: "Over the rate limit of the route's family; `Retry-After` says when to come back, the `RateLimit-*` headers what is left.",
  502: 'A server the service depends on failed; nothing changed.',
  503: 'A store of the service does not answer.',
};

/** The catalog's codes of one status, as a response of that status names them. */
function codesOf(status: ProblemStatus): string {
  const codes = ERROR_CODE_NAMES.filter((code) => statusOf(code) === status);
  return `Codes of this status across the API: ${codes.map((code) => `\`${code}\``).join(', ')}.`;
}

/** Response entries for the given problem statuses (plus 429, which every route can answer). */
export function problemResponses(...statuses: ProblemStatus[]) {
  const all = new Set<ProblemStatus>([...statuses, 429]);
  return Object.fromEntries(
    [...all]
      .sort((a, b) => a - b)
      .map((status) => [
        status,
        {
          description: `${STATUS_CODES[status] ?? 'Error'}. ${MEANING[status]} ${codesOf(status)}`,
          content: { [PROBLEM_MEDIA_TYPE]: { schema: Problem } },
        },
      ]),
  );
}

/** The statuses any route with a JSON body can answer before its handler runs. */
export const BODY_PROBLEMS: readonly ProblemStatus[] = [400, 413, 415];
