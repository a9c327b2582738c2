/**
 * The egress guard's redirect policy ("no redirects to other hosts").
 *
 * A redirect is followed only to the same host name (any port), over http or https but
 * never from https down to plain http, without user info, at most `MAX_REDIRECTS` times;
 * every hop connects through the guard again, so its address is checked like the first.
 * Anything else is refused (`EgressRefused` with reason `redirect`), not handed back as a
 * 3xx answer. Same host, not same origin: a server that moves its endpoint to another
 * port of the same machine still links; its credentials do not travel along (the
 * `Authorization` and `Cookie` headers are dropped when the origin changes, as `fetch`
 * does for cross-origin redirects).
 */
import { EgressRefused } from './refusal.ts';

/** Redirects one request follows at most. */
export const MAX_REDIRECTS = 5;

const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** Headers that carry a credential, dropped when a redirect leaves the origin. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'] as const;

/** Headers that describe a body, dropped when a redirect turns the request into a GET. */
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding'] as const;

/** One request of a chain: where it goes and how. */
export interface Hop {
  readonly url: URL;
  readonly init: RequestInit;
}

/** Whether `status` and `location` make a redirect at all. */
export function isRedirect(status: number, location: string | null): location is string {
  return REDIRECT_STATUSES.has(status) && location !== null;
}

function refuse(host: string, why: string): EgressRefused {
  return new EgressRefused('redirect', host, `a redirect ${why} is not followed`);
}

/**
 * The next request after `current` answered `status` with `location`, or the refusal.
 * `first` is the URL the chain started at; `followed` counts the redirects so far.
 */
export function nextHop(
  first: URL,
  current: Hop,
  status: number,
  location: string,
  followed: number,
): Hop | EgressRefused {
  const host = first.hostname;
  if (followed >= MAX_REDIRECTS) return refuse(host, `past ${MAX_REDIRECTS} hops`);
  if (!URL.canParse(location, current.url.href)) return refuse(host, 'to an invalid URL');
  const url = new URL(location, current.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return refuse(host, 'to a URL that is not http or https');
  }
  if (current.url.protocol === 'https:' && url.protocol === 'http:') {
    return refuse(host, 'from https to plain http');
  }
  if (url.hostname !== first.hostname) return refuse(host, 'to another host');
  if (url.username !== '' || url.password !== '') return refuse(host, 'carrying user info');

  const headers = new Headers(current.init.headers);
  if (url.origin !== current.url.origin) {
    for (const name of CREDENTIAL_HEADERS) headers.delete(name);
  }
  const method = (current.init.method ?? 'GET').toUpperCase();
  // RFC 9110 §15.4: 303 turns any method but HEAD into GET; 301 and 302 turn POST into GET
  // (what every client does); 307 and 308 repeat the request as it was.
  const toGet = (status === 303 && method !== 'HEAD') || (status <= 302 && method === 'POST');
  if (toGet) {
    for (const name of BODY_HEADERS) headers.delete(name);
    const init: RequestInit = { ...current.init, method: 'GET', headers };
    delete init.body;
    return { url, init };
  }
  if (current.init.body instanceof ReadableStream) {
    return refuse(host, 'of a request whose body cannot be sent twice');
  }
  return { url, init: { ...current.init, headers } };
}
