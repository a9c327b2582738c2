/**
 * `buildApp(deps, services)`: the whole HTTP surface over its ports and the process's
 * services (`src/services.ts`, built from `deps` when not given), never listening.
 * `src/main.ts` builds the ports and listens; tests call `app.inject()` or listen on
 * port 0. The route plugins construct no service: each takes what it needs from
 * `Services`, so every route shares one actor host, one directory and one OAuth store.
 */
import websocket from '@fastify/websocket';
import type { Tracer } from '@opentelemetry/api';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Cluster, Redis } from 'ioredis';
import { serializerCompiler } from 'fastify-type-provider-zod';
import { installErrorHandling, notFound } from './http/error-handler.ts';
import { consolePageRoutes } from './http/console-page/page.ts';
import { consoleTenantRoutes } from './http/console/tenant.ts';
import { consoleTokenRoutes } from './http/console/token.ts';
import { inferenceRoutes } from './http/console/inferences.ts';
import { secretRoutes } from './http/console/secrets.ts';
import { usageRoutes } from './http/console/usage.ts';
import { connectionRoutes } from './http/connections/connections.ts';
import { healthRoutes } from './http/health.ts';
import { installJsonBody } from './http/json-body.ts';
import { jwksRoutes } from './http/jwks.ts';
import { metricsRoute } from './http/metrics.ts';
import { CredentialBuckets, identifiers } from './http/rate-keys.ts';
import { installRateLimit, type RateLimits } from './http/rate-limit.ts';
import { sessionRoutes } from './http/sessions/routes.ts';
import { docsRoutes } from './http/docs.ts';
import { openApiRoute, registerOpenApi } from './http/openapi.ts';
import { installSilentConnectionClose } from './http/silent-connections.ts';
import { installRequestLog, requestId } from './http/request-log.ts';
import { installRequestSpans } from './http/request-spans.ts';
import { validatorCompiler } from './http/validation.ts';
import { auditRoutes } from './http/tails/audit.ts';
import { sessionTailRoutes } from './http/tails/session-tail.ts';
import { installHeartbeat } from './http/tails/heartbeat.ts';
import { TAIL_LIMITS, type TailLimits } from './http/tails/limits.ts';
import { HTTP_TIMEOUTS, serverTimeouts, type HttpTimeouts } from './http/timeouts.ts';
import { vendorFlowRoutes } from './http/proposals/flow.ts';
import type { TrustProxy } from './net/proxies.ts';
import { buildServices, type Services, type ServicesDeps } from './services.ts';

/** What the app is built from: the services' ports and configuration, and HTTP settings. */
export interface AppDeps extends ServicesDeps {
  /** Largest request body in bytes (decisions row 87: 1 MiB). */
  readonly bodyLimit: number;
  /** Requests per bucket per window of each route family (decisions row 86, `rate-limit.ts`). */
  readonly rateLimits: RateLimits;
  /**
   * The Redis client the rate limits count through, so that every process of the
   * deployment enforces one limit; absent, each process counts on its own.
   */
  readonly rateLimitRedis?: Redis | Cluster | undefined;
  /** `TRUST_PROXY`: which proxies' `X-Forwarded-For` names the client (off by default). */
  readonly trustProxy?: TrustProxy | undefined;
  /** Largest body of the unauthenticated `POST /appdoc` (256 KiB by default). */
  readonly appdocBodyLimit?: number;
  /** SHA-256 of the operator token (decisions row 73). */
  readonly operatorTokenHash: string;
  /** Whether the operator grant is on; absent, only without an identity provider. */
  readonly operatorGrant?: boolean;
  /** Aborted when the process stops: open tails end cleanly. */
  readonly shutdown: AbortSignal;
  /** How long clients may take over requests; `HTTP_TIMEOUTS` when absent. */
  readonly http?: HttpTimeouts | undefined;
  /** Caps, buffers and liveness of the tails; `TAIL_LIMITS` when absent. */
  readonly tailLimits?: TailLimits | undefined;
  /** `METRICS_TOKEN`: who may scrape `GET /metrics` from elsewhere (`http/metrics.ts`). */
  readonly metricsToken?: string | undefined;
  /** The tracer of request spans when tracing is on (`src/telemetry/`). */
  readonly tracer?: Tracer | undefined;
}

/**
 * Creates the app with every plugin and route registered, not yet ready: a caller may
 * still register more (tests add probe routes); `buildApp` is the usual entry. The app
 * owns `services` from here on: closing the app closes them.
 */
export async function createApp(
  deps: AppDeps,
  services: Services = buildServices(deps),
): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger,
    // One line per request is written by src/http/request-log.ts instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: requestId,
    bodyLimit: deps.bodyLimit,
    return503OnClosing: true,
    // Only documented routes are served: no implicit HEAD twins.
    exposeHeadRoutes: false,
    forceCloseConnections: 'idle',
    ...serverTimeouts(deps.http ?? HTTP_TIMEOUTS),
    trustProxy:
      typeof deps.trustProxy === 'object' ? [...deps.trustProxy] : (deps.trustProxy ?? false),
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
  });
  // First of the hooks, so that the request's span covers all the others.
  if (deps.tracer !== undefined) installRequestSpans(app, deps.tracer);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // Decisions row 2: request bodies are application/json only; anything else is 415.
  installJsonBody(app);

  installErrorHandling(app, (error) => {
    services.metrics.storeFailed(error);
  });
  installRequestLog(app);
  installSilentConnectionClose(app);
  await registerOpenApi(app, deps.baseUrl);
  const rateLimit = await installRateLimit(app, {
    limits: deps.rateLimits,
    buckets: new CredentialBuckets(identifiers({ ...deps, ...services })),
    redis: deps.rateLimitRedis,
    // One deployment is one BASE_URL (decisions row 1): its processes share their counts.
    nameSpace: `ratelimit:${deps.baseUrl}:`,
  });
  docsRoutes(app, deps.entropy);
  await app.register(websocket, { options: { maxPayload: deps.bodyLimit } });
  installHeartbeat(app, deps.tailLimits ?? TAIL_LIMITS);
  // Unknown routes count against the caller's rate limit too.
  app.setNotFoundHandler({ preHandler: rateLimit }, notFound);

  // Turns are driven once the app is ready (sessions a crash left mid-turn resume now),
  // and ended resources are purged from then on;
  // the drivers stop and the commands under way finish before the caller closes the stores.
  app.addHook('onReady', () => {
    services.turns.start();
    services.retention.start();
    return Promise.resolve();
  });
  app.addHook('onClose', () => services.close());

  // Routes per audience; each registers its own schemas into the OpenAPI document, and
  // takes its ports from `deps` and its services from `services`.
  const wired = { ...deps, ...services };
  healthRoutes(app, { log: deps.logStore, control: deps.controlStore });
  metricsRoute(app, { metrics: services.metrics, metricsToken: deps.metricsToken });
  jwksRoutes(app, deps);
  consoleTokenRoutes(app, wired);
  consoleTenantRoutes(app, deps);
  consolePageRoutes(app, wired);
  secretRoutes(app, deps);
  inferenceRoutes(app, deps);
  usageRoutes(app, deps);
  connectionRoutes(app, wired);
  sessionRoutes(app, wired);
  vendorFlowRoutes(app, wired);
  sessionTailRoutes(app, wired);
  auditRoutes(app, wired);
  openApiRoute(app);
  return app;
}

/** Builds the app; resolves once every plugin and route is ready. */
export async function buildApp(deps: AppDeps, services?: Services): Promise<FastifyInstance> {
  const app = await createApp(deps, services);
  await app.ready();
  return app;
}
