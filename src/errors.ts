/**
 * The one error hierarchy of the service (decisions rows 81 to 87).
 *
 * Every failure a caller can see is a `ServiceError` with a stable snake_case
 * `code` of the catalog (`src/error-codes.ts`) and the HTTP `status` the catalog gives
 * it; routes and stores throw these and never pick a status themselves. Each subclass
 * takes only the codes of its own status, so a code outside the catalog, or under the
 * wrong category, does not typecheck. `src/http/error-handler.ts` is the only place that
 * turns them into RFC 9457 problem bodies.
 */
import { statusOf, type CodeOf, type ErrorCode, type ErrorStatus } from './error-codes.ts';
import type { FieldError } from './schemas/problem.ts';

/** Extra members of a problem body (RFC 9457 extensions), e.g. the 2.18 conflict lists. */
export type ProblemExtensions = Readonly<Record<string, unknown>>;

export interface ServiceErrorOptions {
  /** The field at fault, as a dotted path from the top of the request part (`body.tools.0.name`). */
  readonly field?: string;
  /** Why the field was refused, in words a vendor can act on. */
  readonly reason?: string;
  /** Every failed field when there are several. */
  readonly errors?: readonly FieldError[];
  /** Extension members of the problem body. */
  readonly extensions?: ProblemExtensions;
  /** Response headers the answer must carry (`WWW-Authenticate`, `Retry-After`). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly cause?: unknown;
}

/** Base of every error a caller can see; its status is the one the catalog gives its code. */
export abstract class ServiceError extends Error {
  readonly status: ErrorStatus;
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly reason: string | undefined;
  readonly errors: readonly FieldError[] | undefined;
  readonly extensions: ProblemExtensions | undefined;
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(code: ErrorCode, message: string, options: ServiceErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = statusOf(code);
    this.code = code;
    this.field = options.field;
    this.reason = options.reason;
    this.errors = options.errors;
    this.extensions = options.extensions;
    this.headers = options.headers;
  }
}

/** The errors of one status: they take only the catalog's codes of that status. */
abstract class CategoryError<S extends ErrorStatus> extends ServiceError {
  declare readonly status: S;

  constructor(code: CodeOf<S>, message: string, options: ServiceErrorOptions = {}) {
    super(code, message, options);
  }
}

/** 400: the request is malformed or does not fit the contract. */
export class InvalidRequest extends CategoryError<400> {}

/** 401: no credential, or one that does not verify (RFC 6750 §3). */
export class Unauthenticated extends CategoryError<401> {
  /** @param presented whether a credential was sent at all: decides `error="invalid_token"`. */
  constructor(message: string, presented: boolean, options: ServiceErrorOptions = {}) {
    const challenge = presented
      ? `Bearer error="invalid_token", error_description="${message.replaceAll('"', "'")}"`
      : 'Bearer';
    super(presented ? 'invalid_token' : 'unauthenticated', message, {
      ...options,
      headers: { ...options.headers, 'www-authenticate': challenge },
    });
  }
}

/** 403: the caller is known but may not do this. */
export class Forbidden extends CategoryError<403> {}

/** 404: nothing by that name is visible to the caller. */
export class NotFound extends CategoryError<404> {}

/** 409: the request is well formed but collides with the resource's state. */
export class Conflict extends CategoryError<409> {}

/** 413: a request, record or body is over its size limit (decisions row 87). */
export class PayloadTooLarge extends CategoryError<413> {}

/** 415: the request body is not `application/json` (decisions row 2). */
export class UnsupportedMediaType extends CategoryError<415> {}

/** 429: over the rate limit (decisions row 86). */
export class RateLimited extends CategoryError<429> {}

/** 502: a server the service depends on (an MCP server) failed; nothing was changed. */
export class UpstreamFailure extends CategoryError<502> {}

/** How long a client is told to wait before it tries again after a 503, in seconds. */
export const RETRY_AFTER_SECONDS = 1;

/**
 * 503: the service's own stores do not answer (a lost connection, a refused one, a
 * timeout). Nothing the request asked for is known to have happened: the client tries
 * again after `Retry-After` with the same `Idempotency-Key`, which lands its record once
 * however many tries reached the store.
 */
export class Unavailable extends CategoryError<503> {
  constructor(code: CodeOf<503>, message: string, options: ServiceErrorOptions = {}) {
    super(code, message, {
      ...options,
      headers: { 'retry-after': String(RETRY_AFTER_SECONDS), ...options.headers },
    });
  }
}

/** True for any error a caller may see as it is. */
export function isServiceError(error: unknown): error is ServiceError {
  return error instanceof ServiceError;
}
