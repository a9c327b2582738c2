/**
 * Rate limits (decisions row 86) through `@fastify/rate-limit`.
 *
 * Every route but `GET /health`, `GET /openapi.json` and the client modules served to
 * pages (`client-assets.ts`), which say `config.rateLimit: false`, belongs to one family,
 * each with its own limit and its own buckets:
 *
 * | family     | routes                                                      | default      |
 * | ---------- | ----------------------------------------------------------- | ------------ |
 * | `appends`  | `POST /sessions/{id}/events`                                | 100 a second |
 * | `sessions` | every other route taking an install key or a session token  | 100 a second |
 * | `tails`    | `GET /sessions/{id}/events` (NDJSON, WebSocket), the audit  | 100 a second |
 * | `console`  | the routes taking a console token                           | 50 a second  |
 * | `open`     | routes without a service credential, unknown routes         | 20 a second  |
 * | `appdoc`   | `POST /appdoc`, open to anyone                              | 10 a minute  |
 *
 * The family is read once per route from its documented `security` (`openapi.ts`), so a
 * new route falls in the family of its credential. A request counts against the bucket
 * `rate-keys.ts` picks: the verified credential it carries, else its client address.
 * Counting happens in `onRequest`, before the body is read and before the route does any
 * work; past the limit the answer is 429 `rate_limited` through the one error handler,
 * with `Retry-After`. Every counted answer carries `RateLimit-Limit`, `RateLimit-Remaining`
 * and `RateLimit-Reset` (the IETF RateLimit header fields draft, as the plugin writes them).
 *
 * With `REDIS_URL` the counts live in Redis, so every process of a deployment enforces one
 * limit: each process takes a bucket's counts a few at a time and hands them out to its
 * requests (`rate-leases.ts`, which says what that changes), where the plugin's own store
 * made a round trip per request; on a Redis Cluster each bucket is one key, on the master
 * of its slot. While that client is not connected, or a take fails, requests pass
 * uncounted rather than wait for Redis or fail (the routes that need Redis answer 503 by
 * themselves). Without Redis each process counts on its own, in a bounded LRU.
 */
import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance, RouteOptions, preHandlerAsyncHookHandler } from 'fastify';
import type { Cluster, Redis } from 'ioredis';
import { RateLimited } from '../errors.ts';
import { leasedCounts } from './rate-leases.ts';
import type { CredentialBuckets, CredentialKind } from './rate-keys.ts';

/** The families routes are limited in, each with its own limit and buckets. */
export const RATE_FAMILIES = ['appends', 'sessions', 'tails', 'console', 'open', 'appdoc'] as const;
export type RateFamily = (typeof RATE_FAMILIES)[number];

/** `max` requests per `windowMs` for each bucket. */
export interface RateLimit {
  readonly max: number;
  readonly windowMs: number;
}

export type RateLimits = Readonly<Record<RateFamily, RateLimit>>;

/** How a route is limited: its family, and the credential it takes. */
export interface RateRule {
  readonly family: RateFamily;
  /** The credential identified before the route runs (`rate-keys.ts`); null: none. */
  readonly credential: CredentialKind | null;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on every limited route when it is added (`installRateLimit`). */
    rateRule?: RateRule;
  }
}

/** Routes whose family is not their credential's. */
const ROUTE_FAMILIES: Readonly<Record<string, RateFamily>> = {
  'POST /sessions/:id/events': 'appends',
  'GET /sessions/:id/events': 'tails',
  'GET /console/sessions/:id/events': 'tails',
  'POST /appdoc': 'appdoc',
};

/** Unknown routes, and routes added without a rule. */
const OPEN: RateRule = { family: 'open', credential: null };

/** The security schemes a route documents (`schema.security`), any alternative. */
function schemesOf(route: RouteOptions): Set<string> {
  const security = (route.schema as { security?: unknown } | undefined)?.security;
  const schemes = new Set<string>();
  if (!Array.isArray(security)) return schemes;
  for (const requirement of security as unknown[]) {
    if (typeof requirement === 'object' && requirement !== null) {
      for (const name of Object.keys(requirement)) schemes.add(name);
    }
  }
  return schemes;
}

/** The rule of a route: its family, by its path or else by the credential it takes. */
export function rateRule(route: RouteOptions): RateRule {
  const schemes = schemesOf(route);
  const credential: CredentialKind | null = schemes.has('sessionToken')
    ? 'session'
    : schemes.has('installKey')
      ? 'install'
      : schemes.has('consoleToken')
        ? 'console'
        : null;
  const named = ROUTE_FAMILIES[`${String(route.method)} ${route.url}`];
  const family: RateFamily =
    named ?? (credential === null ? 'open' : credential === 'console' ? 'console' : 'sessions');
  return { family, credential };
}

function windowText(ms: number): string {
  if (ms % 60_000 === 0) return ms === 60_000 ? 'a minute' : `${String(ms / 60_000)} minutes`;
  return ms === 1000 ? 'a second' : `${String(ms / 1000)} seconds`;
}

export interface RateLimitOptions {
  readonly limits: RateLimits;
  readonly buckets: CredentialBuckets;
  /** The client counts are shared through; absent, each process counts on its own. */
  readonly redis?: Redis | Cluster | undefined;
  /** Prefix of the Redis keys, one per deployment (`ratelimit:<BASE_URL>:`). */
  readonly nameSpace: string;
}

/**
 * Registers the plugin so that it limits every route added from now on, each in its
 * family. Answers the hook of the `open` family, for handlers that are not routes (the
 * not-found handler).
 */
export async function installRateLimit(
  app: FastifyInstance,
  options: RateLimitOptions,
): Promise<preHandlerAsyncHookHandler> {
  const { limits, buckets, redis } = options;
  const families = new Map<string, RateLimit>(Object.entries(limits));
  // Keys are `<family>:<bucket>`: the family picks the limit.
  const limitOf = (key: string): RateLimit =>
    families.get(key.slice(0, key.indexOf(':'))) ?? limits.open;
  app.addHook('onRoute', (route) => {
    if (route.config?.rateLimit === false) return;
    route.config = { ...route.config, rateRule: rateRule(route) };
  });
  await app.register(fastifyRateLimit, {
    global: true,
    hook: 'onRequest',
    enableDraftSpec: true,
    keyGenerator: (request) => {
      const rule = request.routeOptions.config.rateRule ?? OPEN;
      const bucket = buckets.bucketOf(request, rule.credential);
      return typeof bucket === 'string'
        ? `${rule.family}:${bucket}`
        : bucket.then((found) => `${rule.family}:${found}`);
    },
    max: (_request, key) => limitOf(key).max,
    timeWindow: (_request, key) => limitOf(key).windowMs,
    errorResponseBuilder: (request, context) => {
      const rule = request.routeOptions.config.rateRule ?? OPEN;
      const plural = context.max === 1 ? '' : 's';
      return new RateLimited(
        'rate_limited',
        `over ${String(context.max)} request${plural} in ${windowText(limits[rule.family].windowMs)} (${rule.family}); retry in ${context.after}`,
      );
    },
    // A bounded LRU per process when the counts are not in Redis.
    cache: 20_000,
    ...(redis === undefined
      ? {}
      : {
          store: leasedCounts(redis, options.nameSpace),
          // Not connected: pass rather than queue every request behind the reconnection.
          allowList: () => redis.status !== 'ready',
          skipOnError: true,
        }),
  });
  return app.rateLimit();
}
