/**
 * What every part of the client shares: its options, the typed openapi-fetch client of
 * the service's document, and the transport (kept apart from `client.ts` so that the
 * session calls, which the client makes, need not import it back).
 */
import type { Client as FetchClient } from 'openapi-fetch';
import type { paths } from './openapi.ts';
import type { Fetch, RetryPolicy } from './transport.ts';

/** The typed openapi-fetch client of the service's document. */
export type Api = FetchClient<paths>;

/** What the client is made from: where the service is, and the credentials it holds. */
export interface ClientOptions {
  /** The service's `BASE_URL`, e.g. `https://sessions.example.com`. */
  readonly baseUrl: string;
  /** An install key `ik_…`: proposals for the install, sessions, session tokens. */
  readonly installKey?: string;
  /** A console token: consent, key rotation and the other console routes. */
  readonly consoleToken?: string;
  /** How 429 and 503 are retried; `DEFAULT_RETRY` for what is not given. */
  readonly retry?: Partial<RetryPolicy>;
  /** The `fetch` to send through; `globalThis.fetch` by default. */
  readonly fetch?: Fetch;
  /** The `WebSocket` class for WebSocket tails; `globalThis.WebSocket` by default. */
  readonly WebSocket?: typeof WebSocket;
}

/** `{ authorization: 'Bearer <token>' }`. */
export function bearer(token: string): { authorization: string } {
  return { authorization: `Bearer ${token}` };
}

/** The body of a successful openapi-fetch answer (the transport threw every refusal). */
export async function bodyOf<T>(call: Promise<{ data?: T; response: Response }>): Promise<T> {
  const { data, response } = await call;
  if (data === undefined) throw new Error(`${response.url} answered ${response.status} empty`);
  return data;
}

/** What a client is to the calls it makes: its typed routes, options and transport. */
export interface ClientCore {
  /** Every route of the document, typed; refusals throw `ServiceProblem`. */
  readonly api: Api;
  readonly options: ClientOptions;
  /** The transport every call goes through. */
  readonly fetch: Fetch;
  readonly retry: RetryPolicy;
}
