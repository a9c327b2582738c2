/**
 * The catalog of error codes (decisions rows 81 and 82): every `code` a problem body can
 * carry, with the one HTTP status it answers and what it means to a client.
 *
 * The `ServiceError` subclasses of `src/errors.ts` take a code of this catalog whose status
 * is theirs, so a code outside it, or under the wrong category, does not typecheck; the
 * status an error answers is read from here. The OpenAPI document lists every code with
 * its meaning (`src/schemas/problem.ts`, `src/http/openapi-responses.ts`).
 */

/** The statuses a problem answers (decisions row 81, plus 500 and 503 of the service itself). */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 429 | 500 | 502 | 503;

/** One entry: the status the code answers and its meaning, in words a client can act on. */
interface ErrorCodeEntry {
  readonly status: ErrorStatus;
  readonly meaning: string;
}

/**
 * Every error code, grouped by status in the order of interface section 7. One line per
 * code, read as a table, so the formatter leaves it as written.
 */
// prettier-ignore
export const ERROR_CODES = {
  // 400: the request does not fit the contract (interface §7 "invalid request").
  invalid_request: { status: 400, meaning: 'The request does not fit the contract; `field` and `reason` say where, `errors` lists every failed field.' },
  malformed_json: { status: 400, meaning: 'The body is not JSON, or is empty; `reason` names where it broke.' },
  too_deep: { status: 400, meaning: 'The JSON body nests objects and arrays too deeply.' },
  empty_batch: { status: 400, meaning: 'A batch of records holds no record.' },
  invalid_session_id: { status: 400, meaning: 'The path id is not a session id (72 hex characters).' },
  invalid_endpoint: { status: 400, meaning: 'An MCP endpoint is not an http or https URL.' },
  endpoint_refused: { status: 400, meaning: 'The endpoint being linked, or a URL its server points at, is on an address the service does not connect to, or redirects off its host (`body.endpoint`).' },
  name_mismatch: { status: 400, meaning: '`body.name` differs from the path id.' },
  reserved_name: { status: 400, meaning: 'The name is reserved by the service.' },
  unknown_secret: { status: 400, meaning: 'A credential names a secret the tenant does not hold.' },
  return_to_not_allowed: { status: 400, meaning: '`return_to` is not on the service origin or an allowlisted one.' },
  invalid_state: { status: 400, meaning: 'The OAuth callback `state` is unknown, used, expired, or for another connection.' },
  invalid_policy: { status: 400, meaning: 'A policy does not compile against the tool surface; `field` and `reason` say where.' },
  tool_name_clash: { status: 400, meaning: 'Two tools of the surface the model sees share one name.' },
  unresolved_reference: { status: 400, meaning: 'The tenant config names an inference option, connection, tool or secret the tenant does not own.' },
  duplicate_member: { status: 400, meaning: 'A user is listed twice among the tenant members.' },
  authorization_pending: { status: 400, meaning: 'Poll again later: no owner has answered the proposal yet (RFC 8628 §3.5).' },
  slow_down: { status: 400, meaning: 'Poll again later and less often; `interval` is the new interval (RFC 8628 §3.5).' },
  expired_token: { status: 400, meaning: 'The proposal lapsed without an answer; propose again (RFC 8628 §3.5).' },
  access_denied: { status: 400, meaning: 'An owner declined the proposal (RFC 8628 §3.5).' },
  // 401: no credential, or one that does not verify (RFC 6750 §3).
  unauthenticated: { status: 401, meaning: 'No credential was sent (`WWW-Authenticate: Bearer`).' },
  invalid_token: { status: 401, meaning: 'The credential does not verify, has expired, or no longer stands (`WWW-Authenticate: Bearer error="invalid_token"`).' },
  // 403: the caller is known but may not do this.
  wrong_install: { status: 403, meaning: 'The install key does not name this install.' },
  does_not_attach: { status: 403, meaning: 'The token does not attach to this session.' },
  insufficient_scope: { status: 403, meaning: 'The token lacks the scope this needs (RFC 6750 §3.1).' },
  filter_refused: { status: 403, meaning: 'The write filter refused a record; nothing of the batch landed (`index`, `kind`, `reason`).' },
  not_executor: { status: 403, meaning: 'Only an executor token claims calls.' },
  not_your_call: { status: 403, meaning: 'The record is not a call addressed to this executor.' },
  not_member: { status: 403, meaning: 'The user is not a member of the tenant.' },
  not_owner: { status: 403, meaning: 'Only an owner of the tenant may do this.' },
  browser_mismatch: { status: 403, meaning: 'The authorization was started in another browser.' },
  metrics_forbidden: { status: 403, meaning: 'Metrics are served to this host only unless `METRICS_TOKEN` is set.' },
  // 404: nothing by that name is visible to the caller.
  not_found: { status: 404, meaning: 'Nothing by that name is visible to the caller.' },
  route_not_found: { status: 404, meaning: 'No route answers this method and path.' },
  session_not_found: { status: 404, meaning: 'No such session under this caller.' },
  cause_not_found: { status: 404, meaning: 'No record at that cursor is shown to this token.' },
  no_such_install: { status: 404, meaning: 'The tenant has no such install.' },
  install_gone: { status: 404, meaning: 'The install was deleted.' },
  no_such_request: { status: 404, meaning: 'No such proposal, or it lapsed.' },
  connection_not_found: { status: 404, meaning: 'The tenant owns no connection by that name.' },
  inference_not_found: { status: 404, meaning: 'The tenant owns no inference option by that name.' },
  secret_not_found: { status: 404, meaning: 'The tenant owns no secret by that name.' },
  // 409: the request collides with the resource's state.
  version_conflict: { status: 409, meaning: 'The resource changed under the request; read it and try again.' },
  idempotency_conflict: { status: 409, meaning: 'The idempotency key already holds a different batch.' },
  session_archived: { status: 409, meaning: 'The session is archived; nothing lands on it again.' },
  session_exists: { status: 409, meaning: 'A session with this id exists already.' },
  session_live: { status: 409, meaning: 'The session is still live; the opened face is served once it has ended.' },
  catalog_changed: { status: 409, meaning: 'A connected MCP catalog changed since it was linked (`connections`).' },
  already_granted: { status: 409, meaning: 'The proposal was granted already (`install`).' },
  request_declined: { status: 409, meaning: 'An owner declined the proposal already.' },
  install_exists: { status: 409, meaning: 'Another install holds this id.' },
  not_oauth: { status: 409, meaning: 'The connection does not link through OAuth.' },
  authorization_not_needed: { status: 409, meaning: 'The server no longer demands authorization; the connection is linked.' },
  connection_in_use: { status: 409, meaning: 'Installs still reference the connection (`installs`).' },
  inference_in_use: { status: 409, meaning: 'Installs still reference the inference option (`installs`).' },
  secret_in_use: { status: 409, meaning: 'Inference options or connections still reference the secret (`inferences`, `connections`).' },
  // 413: over a size limit (decisions row 87).
  payload_too_large: { status: 413, meaning: 'The request body is over its size limit.' },
  too_many_records: { status: 413, meaning: 'The batch holds more records than one append takes.' },
  record_too_large: { status: 413, meaning: "A record's body is over its size limit." },
  // 415: the body is not JSON (decisions row 2).
  unsupported_media_type: { status: 415, meaning: 'The body must be `application/json`.' },
  // 429: over a rate limit (decisions row 86).
  rate_limited: { status: 429, meaning: 'Over the rate limit; `Retry-After` says when to come back.' },
  too_many_tails: { status: 429, meaning: 'Too many open tails; close one to open another (`limit`).' },
  // 500: our fault.
  internal: { status: 500, meaning: 'The service failed; nothing is promised about the request.' },
  // 502: a server the service depends on failed; nothing changed.
  upstream_unreachable: { status: 502, meaning: 'The MCP server could not be reached.' },
  upstream_timeout: { status: 502, meaning: 'The MCP server did not answer in time.' },
  upstream_unreadable: { status: 502, meaning: 'The MCP server answered something that is not valid MCP, or an HTTP error.' },
  upstream_authorization_required: { status: 502, meaning: 'The MCP server demands authorization the service does not hold.' },
  upstream_authorization_failed: { status: 502, meaning: "The MCP server's authorization server refused registration or authorization." },
  upstream_too_large: { status: 502, meaning: 'The MCP server sent more than the service reads.' },
  upstream_catalog_too_large: { status: 502, meaning: "The MCP server's catalog is over the service's bounds." },
  upstream_refused: { status: 502, meaning: 'The MCP server, or a URL it points at, is on an address the service does not connect to, or redirects off its host.' },
  connection_authorizing: { status: 502, meaning: 'A connection is waiting for authorization; its catalog cannot be read.' },
  oidc_unavailable: { status: 502, meaning: 'The OpenID Connect issuer could not be read.' },
  // 503: a store of the service does not answer; try again after `Retry-After`.
  store_unavailable: { status: 503, meaning: 'A store of the service does not answer.' },
  store_busy: { status: 503, meaning: 'The SQLite database stayed locked.' },
  store_closed: { status: 503, meaning: 'The store is closed (the service is shutting down).' },
  store_failed: { status: 503, meaning: 'A store write of the runtime failed.' },
  host_closed: { status: 503, meaning: 'The actor host is shutting down.' },
  actor_failed: { status: 503, meaning: "A resource's actor failed to answer." },
  effect_failed: { status: 503, meaning: "An effect of a resource's actor failed." },
  unhealthy: { status: 503, meaning: 'A health check fails (`checks`).' },
} as const satisfies Readonly<Record<string, ErrorCodeEntry>>;

/** Every code of the catalog. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes that answer status `S`. */
export type CodeOf<S extends ErrorStatus> = {
  [C in ErrorCode]: (typeof ERROR_CODES)[C]['status'] extends S ? C : never;
}[ErrorCode];

/** The codes in catalog order, for the problem schema's enum. */
export const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

/** The status a code answers. */
export function statusOf(code: ErrorCode): ErrorStatus {
  return ERROR_CODES[code].status;
}
