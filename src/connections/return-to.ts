/**
 * Where the owner's browser goes after authorizing a connection (4.3 `return_to`,
 * decisions rows 44 and 45): only to an allowlisted origin, so the callback can never be
 * used as an open redirect.
 *
 * The allowlist is the service's own origin (`BASE_URL`, row 1, where a console would be
 * served) plus the origins a deployment names (`AppDeps.connectionReturnOrigins`). The
 * endpoint's origin is deliberately not allowed: whoever runs the MCP server would
 * otherwise choose where the service sends a signed-in owner.
 */
import { InvalidRequest } from '../errors.ts';

/** The origins a `return_to` may point at. */
export interface ReturnToPolicy {
  /** The service's `BASE_URL`; its origin is always allowed and the default goes there. */
  readonly baseUrl: string;
  /** More allowed origins (`https://console.example.com`), exact match. */
  readonly origins?: readonly string[];
}

/** `origin` of an http(s) URL, or null for anything else (`javascript:` has origin `null`). */
function httpOrigin(text: string): string | null {
  if (!URL.canParse(text)) return null;
  const url = new URL(text);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  return url.origin;
}

/**
 * The `return_to` to keep: the given one when its origin is allowlisted, `BASE_URL` when
 * none is given.
 * @throws InvalidRequest `return_to_not_allowed` (field `body.return_to`) otherwise.
 */
export function resolveReturnTo(given: string | undefined, policy: ReturnToPolicy): string {
  if (given === undefined) return policy.baseUrl;
  const origin = httpOrigin(given);
  const allowed = new Set(
    [policy.baseUrl, ...(policy.origins ?? [])]
      .map(httpOrigin)
      .filter((value): value is string => value !== null),
  );
  if (origin === null || !allowed.has(origin)) {
    throw new InvalidRequest(
      'return_to_not_allowed',
      'return_to must be on the service origin or an allowlisted one',
      { field: 'body.return_to', reason: `origin must be one of ${[...allowed].join(', ')}` },
    );
  }
  return new URL(given).href;
}

/** `return_to` with the callback's outcome added to its query (`error=access_denied`). */
export function withParams(returnTo: string, params: Readonly<Record<string, string>>): string {
  const url = new URL(returnTo);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url.href;
}
