/**
 * `GET /metrics`: the process's metrics in the Prometheus text format
 * (`src/metrics/service-metrics.ts`).
 *
 * Who may scrape. The counts name no tenant, install, session or user, but they still say
 * how busy the service is, so they are not public:
 * - with `METRICS_TOKEN` set, a scrape must carry `Authorization: Bearer <METRICS_TOKEN>`
 *   (compared by its SHA-256 in constant time), from any address; anything else is 401;
 * - without it, only a scraper on this host is answered: the TCP peer must be a loopback
 *   address and the request must carry no `Forwarded` or `X-Forwarded-For` header, so a
 *   reverse proxy on the same host does not pass the world's requests on as its own;
 *   anything else is 403 `metrics_forbidden`. Behind a proxy, set `METRICS_TOKEN`.
 * The peer is the socket's address, never one a header names (`TRUST_PROXY` or not).
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { hashCredential } from '../auth/key-material.ts';
import { requireBearer } from '../auth/bearer.ts';
import { Forbidden, Unauthenticated } from '../errors.ts';
import type { ServiceMetrics } from '../metrics/service-metrics.ts';
import { classifyAddress } from '../net/addresses.ts';
import { problemResponses } from './openapi-responses.ts';

export interface MetricsRouteDeps {
  readonly metrics: ServiceMetrics;
  /** `METRICS_TOKEN`: the bearer a scraper presents; absent, loopback scrapers only. */
  readonly metricsToken?: string | undefined;
}

const DESCRIPTION = `The process's counters, gauges and histograms in the Prometheus text format (version 0.0.4): appends and records by log backend, append latency, live tails by transport, live actors and turn drivers, turns by outcome and their duration, appends of records that drive turns by how their session was kept due, store errors, and the process's own CPU, memory, event-loop delay and handles. No label names a tenant, install, session or user.

With \`METRICS_TOKEN\` set, send it as a bearer credential (401 otherwise). Without it, only a scraper on the service's own host may read this: a loopback peer with no \`Forwarded\` or \`X-Forwarded-For\` header (403 \`metrics_forbidden\` otherwise).`;

const EXAMPLE = `# HELP agent_sessions_appends_total Append requests answered 200, by log backend and whether the batch landed or replayed an earlier one.
# TYPE agent_sessions_appends_total counter
agent_sessions_appends_total{backend="sqlite",outcome="landed"} 42
`;

/** Refuses the scrape unless the access rule above lets it through. */
function admit(request: FastifyRequest, tokenHash: Buffer | undefined): void {
  if (tokenHash !== undefined) {
    const presented = Buffer.from(
      hashCredential(requireBearer(request.headers.authorization)),
      'hex',
    );
    if (presented.length !== tokenHash.length || !timingSafeEqual(presented, tokenHash)) {
      throw new Unauthenticated('the metrics token does not match', true);
    }
    return;
  }
  const peer = request.socket.remoteAddress;
  const forwarded =
    request.headers.forwarded !== undefined || request.headers['x-forwarded-for'] !== undefined;
  if (peer === undefined || classifyAddress(peer) !== 'loopback' || forwarded) {
    throw new Forbidden(
      'metrics_forbidden',
      'metrics are served to this host only; set METRICS_TOKEN to scrape from elsewhere',
    );
  }
}

/** Registers `GET /metrics`. */
export function metricsRoute(app: FastifyInstance, deps: MetricsRouteDeps): void {
  const tokenHash =
    deps.metricsToken === undefined
      ? undefined
      : Buffer.from(hashCredential(deps.metricsToken), 'hex');
  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Metrics for Prometheus',
        description: DESCRIPTION,
        tags: ['service'],
        security: [{ metricsToken: [] }, {}],
        response: {
          200: {
            description: 'The metrics, Prometheus text format.',
            content: {
              'text/plain; version=0.0.4; charset=utf-8': {
                schema: z.string().meta({ example: EXAMPLE }),
              },
            },
          },
          ...problemResponses(401, 403),
        },
      },
    },
    async (request, reply) => {
      admit(request, tokenHash);
      const { text, contentType } = await deps.metrics.scrape();
      return reply.type(contentType).header('cache-control', 'no-store').send(text);
    },
  );
}
