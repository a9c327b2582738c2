/**
 * The executor's view of the service: where it connects, which session it serves, and one
 * JSON request helper. `serviceUrl` is where requests go; `baseUrl` is the service's
 * `BASE_URL`, which assertions name as their audience (row 65). They differ only when the
 * executor reaches the service by another address than its public one (a test on port 0,
 * a sidecar on localhost).
 */

/** What every part of the executor needs to know. */
export interface Settings {
  /** Where requests go, e.g. `http://127.0.0.1:8080`. */
  readonly serviceUrl: string;
  /** The service's `BASE_URL`: the assertion's `aud` is the token endpoint under it. */
  readonly baseUrl: string;
  /** The session id (72 hex characters). */
  readonly session: string;
  /** The executor name registered at `POST /sessions`; the records say `executor:<name>`. */
  readonly name: string;
}

/** An answer: the status and the parsed JSON body (undefined when empty). */
export interface Answer {
  readonly status: number;
  readonly body: unknown;
}

/** `method path` on the service with `bearer`, sending `body` as JSON when given. */
export async function callService(
  settings: Settings,
  method: 'GET' | 'POST',
  path: string,
  bearer: string,
  body?: unknown,
): Promise<Answer> {
  const response = await fetch(new URL(path, settings.serviceUrl), {
    method,
    headers: {
      authorization: `Bearer ${bearer}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

/** The session's path under the service: `/sessions/<id><rest>`. */
export const sessionPath = (settings: Settings, rest: string): string =>
  `/sessions/${settings.session}${rest}`;
