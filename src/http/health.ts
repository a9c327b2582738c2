/**
 * Health (decisions row 79), open to anyone and saying nothing secret:
 * - `GET /health` and `GET /health/ready`: 200 `{status: "ok"}` when every store answers,
 *   503 problem naming the failing part otherwise (with `Retry-After`). A load balancer
 *   sends no traffic to a process that is not ready.
 * - `GET /health/live`: 200 while the process serves requests at all, whatever its stores
 *   do. An orchestrator restarts a process that is not live; a store outage is no reason
 *   to, since the process reconnects by itself when the store comes back.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { Unavailable } from '../errors.ts';
import type { ControlStore } from '../storage/control-store.ts';
import type { LogStore } from '../storage/log-store.ts';
import { problemResponses } from './openapi-responses.ts';

const Check = z.object({ backend: z.string(), status: z.enum(['ok', 'failing']) });

export const HealthAnswer = z
  .object({
    status: z.literal('ok'),
    checks: z.object({ log: Check, control: Check }),
  })
  .meta({ id: 'Health', description: 'Every store answers.' });

export const LiveAnswer = z
  .object({ status: z.literal('ok') })
  .meta({ id: 'Liveness', description: 'The process serves requests.' });

const PING_TIMEOUT_MS = 2_000;

/** 'ok', or why the store did not answer. */
async function probe(ping: () => Promise<void>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      ping(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          reject(new Error(`no answer within ${PING_TIMEOUT_MS} ms`));
        }, PING_TIMEOUT_MS);
      }),
    ]);
    return 'ok';
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    clearTimeout(timer);
  }
}

export interface HealthDeps {
  readonly log: LogStore;
  readonly control: ControlStore;
}

/** Registers `GET /health`, `GET /health/ready` and `GET /health/live`. */
export function healthRoutes(app: FastifyInstance, deps: HealthDeps): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  routes.get(
    '/health/live',
    {
      config: { rateLimit: false },
      schema: {
        summary: 'Whether the process serves requests (its stores are not asked)',
        tags: ['service'],
        response: { 200: LiveAnswer },
      },
    },
    () => ({ status: 'ok' as const }),
  );
  for (const [url, summary] of [
    ['/health', 'Whether the service and its stores answer'],
    ['/health/ready', 'Whether the service is ready: every store answers'],
  ] as const) {
    routes.get(
      url,
      {
        config: { rateLimit: false },
        schema: {
          summary,
          tags: ['service'],
          response: { 200: HealthAnswer, ...problemResponses(503) },
        },
      },
      () => ready(deps),
    );
  }
}

/** Asks every store; the answer of `/health`, or the 503 naming the failing ones. */
async function ready(deps: HealthDeps): Promise<z.infer<typeof HealthAnswer>> {
  const [log, control] = await Promise.all([
    probe(deps.log.ping.bind(deps.log)),
    probe(deps.control.ping.bind(deps.control)),
  ]);
  const failing = [
    ...(log === 'ok' ? [] : [`log store (${deps.log.backend}): ${log}`]),
    ...(control === 'ok' ? [] : [`control store (${deps.control.backend}): ${control}`]),
  ];
  if (failing.length > 0) {
    throw new Unavailable('unhealthy', `failing: ${failing.join('; ')}`, {
      extensions: {
        checks: {
          log: { backend: deps.log.backend, status: log === 'ok' ? 'ok' : 'failing' },
          control: {
            backend: deps.control.backend,
            status: control === 'ok' ? 'ok' : 'failing',
          },
        },
      },
    });
  }
  return {
    status: 'ok' as const,
    checks: {
      log: { backend: deps.log.backend, status: 'ok' as const },
      control: { backend: deps.control.backend, status: 'ok' as const },
    },
  };
}
