/**
 * Rate limits (decisions row 86): requests per credential (or per address without one)
 * in fixed windows; past the limit a request is refused with 429 `rate_limited` and
 * `Retry-After`. Every counted answer carries `X-RateLimit-Limit`, `-Remaining` and
 * `-Reset` (seconds until the window ends).
 *
 * A route takes the app's limit unless its `config.rateLimit` names its own, or `false`
 * for none (`GET /health`, `GET /openapi.json`). The counting is a synchronous
 * `onRequest` hook over an in-process map: `@fastify/rate-limit`, which this replaces,
 * did the same through three awaits and a per-request `routeOptions` object, about
 * 10 µs a request on the append path (`npm run bench`). Limits are per process: two
 * processes behind one balancer each allow the limit.
 */
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from 'fastify';
import type { Clock } from '../clock.ts';
import { RateLimited } from '../errors.ts';

/** A limit: `max` requests per `windowMs` for each bucket `key` names. */
export interface RateLimit {
  readonly max: number;
  readonly windowMs: number;
  /** The bucket a request counts against. */
  readonly key: (request: FastifyRequest) => string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's own limit, or false for none; absent, the app's limit applies. */
    rateLimit?: RateLimit | false;
  }
}

/** Buckets one limit keeps at most: past that, the one renewed longest ago is dropped. */
const DEFAULT_CAPACITY = 50_000;

interface Window {
  start: number;
  count: number;
}

/**
 * Fixed windows per key. A key's window starts at its first request and lasts
 * `windowMs`; at most `capacity` keys are kept, and a key renewed longest ago goes first
 * (a dropped key starts afresh: the bound errs towards admitting).
 */
export class WindowCounter {
  readonly #windowMs: number;
  readonly #capacity: number;
  readonly #windows = new Map<string, Window>();

  constructor(windowMs: number, capacity = DEFAULT_CAPACITY) {
    this.#windowMs = windowMs;
    this.#capacity = capacity;
  }

  /** Counts one request of `key` at `now`; answers its window, this request included. */
  count(key: string, now: number): Readonly<Window> {
    let window = this.#windows.get(key);
    if (window === undefined || now >= window.start + this.#windowMs) {
      // Renewed keys go to the back of the map's order, so the front is the stalest.
      if (window !== undefined) this.#windows.delete(key);
      else if (this.#windows.size >= this.#capacity) this.#dropStalest();
      window = { start: now, count: 0 };
      this.#windows.set(key, window);
    }
    window.count += 1;
    return window;
  }

  #dropStalest(): void {
    const stalest = this.#windows.keys().next();
    if (stalest.done !== true) this.#windows.delete(stalest.value);
  }
}

/** A hook that counts a request against `limit`; usable as `onRequest` or `preHandler`. */
export type RateLimitHook = (
  request: FastifyRequest,
  reply: FastifyReply,
  done: HookHandlerDoneFunction,
) => void;

function windowText(ms: number): string {
  if (ms % 60_000 === 0) return ms === 60_000 ? 'a minute' : `${ms / 60_000} minutes`;
  return ms === 1000 ? 'a second' : `${ms / 1000} seconds`;
}

/** The hook of one limit, with its own counter. */
export function rateLimitHook(limit: RateLimit, clock: Clock): RateLimitHook {
  const counter = new WindowCounter(limit.windowMs);
  const maxText = String(limit.max);
  const message = `over ${maxText} request${limit.max === 1 ? '' : 's'} in ${windowText(limit.windowMs)}`;
  return (request, reply, done) => {
    const now = clock.now();
    const window = counter.count(limit.key(request), now);
    const reset = String(Math.max(1, Math.ceil((window.start + limit.windowMs - now) / 1000)));
    void reply
      .header('x-ratelimit-limit', maxText)
      .header('x-ratelimit-remaining', String(Math.max(0, limit.max - window.count)))
      .header('x-ratelimit-reset', reset);
    if (window.count <= limit.max) {
      done();
      return;
    }
    done(new RateLimited('rate_limited', message, { headers: { 'retry-after': reset } }));
  };
}

/**
 * Puts `limit` on every route added from now on, or the route's own `config.rateLimit`.
 * Answers the app-wide hook, for handlers that are not routes (the not-found handler).
 */
export function installRateLimit(
  app: FastifyInstance,
  limit: RateLimit,
  clock: Clock,
): RateLimitHook {
  const appWide = rateLimitHook(limit, clock);
  app.addHook('onRoute', (route) => {
    const own = route.config?.rateLimit;
    if (own === false) return;
    const hook = own === undefined ? appWide : rateLimitHook(own, clock);
    const hooks = route.onRequest;
    route.onRequest = hooks === undefined ? [hook] : [...[hooks].flat(), hook];
  });
  return appWide;
}
