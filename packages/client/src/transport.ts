/**
 * The one way the client reaches the service: a `fetch` that retries
 * 429 and 503 after `Retry-After` with a bounded exponential backoff, never anything
 * else, and turns every other answer outside 2xx into a `ServiceProblem`. Only `fetch`,
 * so it runs in browsers and in Node alike.
 */
import { ServiceProblem } from './problem.ts';

/** How 429 and 503 answers are retried. */
export interface RetryPolicy {
  /** Retries after the first attempt; 0 never retries. */
  readonly retries: number;
  /** The first backoff when the answer names no `Retry-After`, in ms; it doubles per retry. */
  readonly baseDelayMs: number;
  /** No wait is longer than this, whatever `Retry-After` says, in ms. */
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 4, baseDelayMs: 250, maxDelayMs: 30_000 };

/** What the client sends requests through; `globalThis.fetch` by default. */
export type Fetch = (request: Request) => Promise<Response>;

/** Statuses that say "come back later": the only ones retried. */
const RETRIED = new Set([429, 503]);

/**
 * `Retry-After` in ms (delta-seconds or an HTTP date, RFC 9110 §10.2.3); undefined when
 * absent or unreadable.
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The wait before retry number `retry` (from 0): `Retry-After` when given, bounded. */
export function backoffMs(policy: RetryPolicy, retry: number, retryAfter?: number): number {
  const exponential = policy.baseDelayMs * 2 ** retry;
  return Math.min(policy.maxDelayMs, retryAfter ?? exponential);
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A `fetch` that retries 429 and 503 as `policy` says and throws every other refusal. */
export function serviceFetch(base: Fetch, policy: RetryPolicy): Fetch {
  return async (request) => {
    for (let retry = 0; ; retry += 1) {
      // A body can be sent once: every attempt sends a copy.
      const response = await base(request.clone());
      if (response.ok) return response;
      if (!RETRIED.has(response.status) || retry >= policy.retries) {
        throw await ServiceProblem.of(response);
      }
      const wait = backoffMs(policy, retry, retryAfterMs(response.headers.get('retry-after')));
      await response.body?.cancel();
      await sleep(wait, request.signal);
    }
  };
}
