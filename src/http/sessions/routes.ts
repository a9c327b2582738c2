/**
 * The session routes (interface 4.1 sessions, 4.2 append and status, 4.4 console
 * sessions and archive): registers each route file over one shared `SessionContext`.
 * What the routes share (the lifecycle and its actor host, the token cache, the
 * directory) is built once per process by `src/services.ts`; the host closes with the
 * services when the app closes, so commands under way finish before the stores close.
 */
import type { FastifyInstance } from 'fastify';
import type { TokenService } from '../../auth/tokens.ts';
import type { SessionDirectory } from '../../sessions/directory.ts';
import type { SessionLifecycle } from '../../sessions/lifecycle.ts';
import type { SessionTokens } from '../../sessions/tokens.ts';
import type { ControlStore } from '../../storage/control-store.ts';
import type { LogStore } from '../../storage/log-store.ts';
import type { TurnRuntime } from '../../turns/runtime.ts';
import type { ExecutorAccess } from '../../sessions/executors.ts';
import { executorRoutes } from './executor.ts';
import { appendRoute } from './append.ts';
import { archiveRoute } from './archive.ts';
import type { ServiceMetrics } from '../../metrics/service-metrics.ts';
import type { SessionContext } from './context.ts';
import { consoleSessionRoutes } from './console.ts';
import { directoryRoute } from './directory.ts';
import { openRoute } from './open.ts';
import { statusRoute } from './status.ts';
import { tokenRoute } from './token.ts';

/** What the session routes are built from (parts of `AppDeps` and of `Services`). */
export interface SessionRouteDeps {
  readonly baseUrl: string;
  readonly logStore: LogStore;
  readonly controlStore: ControlStore;
  /** Verifies console tokens. */
  readonly tokens: TokenService;
  /** The HMAC key of session ids (decisions row 5, `deriveSessionIdKey`). */
  readonly sessionIdKey: Buffer;
  /** Mints and verifies session tokens; one per process, shared with the tails. */
  readonly sessionTokens: SessionTokens;
  readonly directory: SessionDirectory;
  readonly lifecycle: SessionLifecycle;
  readonly turns: TurnRuntime;
  readonly sealKey: Buffer;
  readonly executors: ExecutorAccess;
  readonly metrics: ServiceMetrics;
}

/** Registers every session route. */
export function sessionRoutes(app: FastifyInstance, deps: SessionRouteDeps): void {
  const context: SessionContext = {
    baseUrl: deps.baseUrl.replace(/\/+$/, ''),
    logStore: deps.logStore,
    controlStore: deps.controlStore,
    consoleTokens: deps.tokens,
    tokens: deps.sessionTokens,
    directory: deps.directory,
    lifecycle: deps.lifecycle,
    turns: deps.turns,
    sealKey: deps.sealKey,
    executors: deps.executors,
    idKey: deps.sessionIdKey,
    metrics: deps.metrics,
  };
  openRoute(app, context);
  directoryRoute(app, context);
  tokenRoute(app, context);
  appendRoute(app, context);
  statusRoute(app, context);
  executorRoutes(app, context);
  archiveRoute(app, context);
  consoleSessionRoutes(app, context);
}
