/**
 * The session routes (interface 4.1 sessions, 4.2 append and status, 4.4 console
 * sessions and archive): builds what they share once per app (the session actor host, the
 * token cache, the directory) and registers each route file. The host is closed with the
 * app, so commands under way finish before the stores close.
 */
import type { FastifyInstance } from 'fastify';
import type { InstallHooks } from '../../consent/installs.ts';
import { ActorHost } from '../../actors/actor-host.ts';
import type { TokenService } from '../../auth/tokens.ts';
import type { Clock, Entropy } from '../../clock.ts';
import { ControlOAuthStore } from '../../connections/oauth-store.ts';
import { SessionDirectory } from '../../sessions/directory.ts';
import { SessionLifecycle } from '../../sessions/lifecycle.ts';
import type { SessionTokens } from '../../sessions/tokens.ts';
import type { ControlStore } from '../../storage/control-store.ts';
import type { LogStore } from '../../storage/log-store.ts';
import { appendRoute } from './append.ts';
import { archiveRoute } from './archive.ts';
import type { SessionContext } from './context.ts';
import { consoleSessionRoutes } from './console.ts';
import { directoryRoute } from './directory.ts';
import { openRoute } from './open.ts';
import { statusRoute } from './status.ts';
import { tokenRoute } from './token.ts';

/** What the session routes are built from (a subset of `AppDeps`). */
export interface SessionRouteDeps {
  readonly baseUrl: string;
  readonly logStore: LogStore;
  readonly controlStore: ControlStore;
  readonly tokens: TokenService;
  readonly clock: Clock;
  readonly entropy: Entropy;
  /** The HMAC key of session ids (decisions row 5, `deriveSessionIdKey`). */
  readonly sessionIdKey: Buffer;
  /** The key the connections' OAuth state is sealed under (`ControlOAuthStore`). */
  readonly sealKey: Buffer;
  /** Mints and verifies session tokens; one per app, shared with the tails. */
  readonly sessionTokens: SessionTokens;
}

/** Registers every session route. */
export function sessionRoutes(app: FastifyInstance, deps: SessionRouteDeps): InstallHooks {
  const host = new ActorHost({ store: deps.controlStore, clock: deps.clock, sweepEveryMs: 60_000 });
  const directory = new SessionDirectory(deps.controlStore);
  const tokens = deps.sessionTokens;
  const oauth = new ControlOAuthStore(deps.controlStore, deps.sealKey, deps.clock);
  const lifecycle = new SessionLifecycle({
    host,
    logStore: deps.logStore,
    directory,
    tokens,
    entropy: deps.entropy,
    idKey: deps.sessionIdKey,
    catalogs: {
      controlStore: deps.controlStore,
      clock: deps.clock,
      entropy: deps.entropy,
      baseUrl: deps.baseUrl,
      oauthStates: (endpoint) => oauth.forEndpoint(endpoint),
    },
  });
  const context: SessionContext = {
    baseUrl: deps.baseUrl.replace(/\/+$/, ''),
    logStore: deps.logStore,
    controlStore: deps.controlStore,
    consoleTokens: deps.tokens,
    tokens,
    directory,
    lifecycle,
    idKey: deps.sessionIdKey,
  };
  app.addHook('onClose', () => host.close());

  openRoute(app, context);
  directoryRoute(app, context);
  tokenRoute(app, context);
  appendRoute(app, context);
  statusRoute(app, context);
  archiveRoute(app, context);
  consoleSessionRoutes(app, context);
  return { deleted: (install) => archiveSessionsOf(install.id, directory, lifecycle) };
}

/**
 * Decisions rows 61 and 76: deleting an install ends its sessions, each with
 * `session.archived` by `install_deleted`. Archiving is idempotent, so a repeated delete
 * finishes what an interrupted one left.
 */
async function archiveSessionsOf(
  install: string,
  directory: SessionDirectory,
  lifecycle: SessionLifecycle,
): Promise<void> {
  let after: string | undefined;
  do {
    const page = await directory.page({ install }, after, 100);
    for (const row of page.rows) {
      if (row.archived) continue;
      const session = await directory.get(row.id);
      if (session !== null && !session.value.archived) {
        await lifecycle.archive(session.value, { by: 'install_deleted' });
      }
    }
    after = page.next ?? undefined;
  } while (after !== undefined);
}
