/**
 * The connection machine's effects, provided at the edge (STYLE: effects by name): the
 * `catalogReader` and `authorizer` actors over the MCP client of `src/mcp`.
 *
 * - `catalogReader` with a credential: the secret the tenant holds is read
 *   (`readSecretValue`) and sent as a bearer (3.3 row 1); the server must answer its
 *   catalog. Without one: `beginLink` (stored OAuth tokens, a server that demands nothing,
 *   or a new authorization URL; 3.3 rows 2 and 4), or `freshAuthorizeUrl` (row 43).
 * - `authorizer`: `finishLink`, the code exchange with PKCE, then discovery (row 45).
 *
 * Every request to the server goes through the process's egress guard (`deps.egress`). Where the owner is linking (`PUT /connections`), a refusal of the
 * guard is the owner's to fix: 400 `endpoint_refused` naming `body.endpoint`.
 *
 * Both answer a `LinkResult`; every failure is a `ServiceError` (502 upstream failures,
 * 400 for a state or secret that is not there any more) that the machine keeps as
 * `failure` while the connection stays as it was, and that the actor host answers the
 * command with, committing nothing (`connectionLogic`).
 */
import { fromPromise } from 'xstate';
import type { EffectSink } from '../actors/actor-type.ts';
import type { Clock, Entropy } from '../clock.ts';
import { InvalidRequest } from '../errors.ts';
import type { DiscoveredCatalog } from '../mcp/catalog.ts';
import { discoverCatalog } from '../mcp/discover.ts';
import { EndpointRefused } from '../mcp/failures.ts';
import {
  beginLink,
  finishLink,
  freshAuthorizeUrl,
  type LinkContext,
  type LinkOutcome,
} from '../mcp/oauth.ts';
import type { ConnectionRef, OAuthStateStore } from '../mcp/oauth-state.ts';
import {
  connectionMachine,
  type AuthorizerInput,
  type CatalogReaderInput,
  type ConnectionConfig,
  type LinkResult,
} from '../machines/connection.machine.ts';
import type { Catalog, ConnectionAuth } from '../schemas/connections.ts';
import { parseDuration } from '../schemas/duration.ts';
import type { Egress } from '../net/egress.ts';
import type { ControlStore } from '../storage/control-store.ts';
import type { ControlOAuthStore } from './oauth-store.ts';

/** Decisions row 18: a connection without a `timeout` gets 60 s per exchange. */
export const DEFAULT_TIMEOUT_MS = 60_000;

/** What the effects need from the service. */
export interface ConnectionEffectDeps {
  readonly control: ControlStore;
  readonly oauth: ControlOAuthStore;
  /** `BASE_URL` (row 1): the OAuth callback is `${baseUrl}/connections/callback`. */
  readonly baseUrl: string;
  readonly clock: Clock;
  readonly entropy: Entropy;
  /** The process's egress guard: every request to a connection's server goes through it. */
  readonly egress: Egress;
}

/** A connection's `timeout` (a Go duration, row 18) in ms. */
export function timeoutMs(timeout: string | null): number {
  return (timeout === null ? null : parseDuration(timeout)) ?? DEFAULT_TIMEOUT_MS;
}

/**
 * The kept form of a discovered catalog (2.12, row 42): its tools, digest and capture time,
 * without the server's introduction. Session start compares a fresh discovery's digest
 * with the kept one (row 47).
 */
export function keptCatalog(catalog: DiscoveredCatalog): Catalog {
  return {
    tools: catalog.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: { ...tool.inputSchema },
      ...(tool.outputSchema === undefined ? {} : { outputSchema: { ...tool.outputSchema } }),
    })),
    digest: catalog.digest,
    captured: catalog.captured,
  };
}

/** The OAuth flow's context for one connection's config. */
export function linkContext(deps: ConnectionEffectDeps, config: ConnectionConfig): LinkContext {
  return {
    store: deps.oauth.forEndpoint(config.endpoint),
    baseUrl: deps.baseUrl,
    clock: deps.clock,
    entropy: deps.entropy,
    timeoutMs: timeoutMs(config.timeout),
    egress: deps.egress,
  };
}

/** Row 41: `oauth` with the issuer and scopes the tokens carry; never a token. */
function oauthAuth(issuer: string | undefined, scope: string | undefined): ConnectionAuth {
  const scopes = scope?.split(' ').filter((s) => s !== '') ?? [];
  return {
    kind: 'oauth',
    ...(issuer !== undefined && URL.canParse(issuer) ? { issuer } : {}),
    ...(scopes.length > 0 ? { scopes } : {}),
  };
}

/** The machine's result from the OAuth flow's outcome, with the auth it linked under. */
async function resultOf(
  store: OAuthStateStore,
  ref: ConnectionRef,
  outcome: LinkOutcome,
): Promise<LinkResult> {
  if (outcome.status === 'authorizing') {
    const client = await store.loadClient(ref);
    return {
      status: 'authorizing',
      auth: oauthAuth(client?.issuer, undefined),
      authorize: outcome.authorize.href,
    };
  }
  const tokens = await store.loadTokens(ref);
  return {
    status: 'linked',
    // Linked without tokens: the server demands no authorization at all.
    auth: tokens === undefined ? { kind: 'none' } : oauthAuth(tokens.issuer, tokens.scope),
    catalog: keptCatalog(outcome.catalog),
  };
}

/**
 * An endpoint the guard refuses, while the owner links it, is a 400
 * naming `body.endpoint`; the message says which rule, never what the server said.
 */
function refusedEndpoint(error: unknown): unknown {
  if (!(error instanceof EndpointRefused)) return error;
  return new InvalidRequest('endpoint_refused', error.message, {
    field: 'body.endpoint',
    reason: error.refusal,
  });
}

async function readCatalog(
  deps: ConnectionEffectDeps,
  ref: ConnectionRef,
  input: CatalogReaderInput,
): Promise<LinkResult> {
  try {
    return await probe(deps, ref, input);
  } catch (error) {
    throw input.purpose === 'link' ? refusedEndpoint(error) : error;
  }
}

async function probe(
  deps: ConnectionEffectDeps,
  ref: ConnectionRef,
  { purpose, config }: CatalogReaderInput,
): Promise<LinkResult> {
  if (config.credential !== null && purpose === 'link') {
    const bearer = await deps.control.readSecretValue(ref.tenant, config.credential);
    if (bearer === null) {
      throw new InvalidRequest(
        'unknown_secret',
        `the tenant holds no secret named ${config.credential}`,
        {
          field: 'body.credential',
          reason: 'names no secret the tenant holds',
        },
      );
    }
    const catalog = await discoverCatalog({
      endpoint: config.endpoint,
      bearer,
      timeoutMs: timeoutMs(config.timeout),
      clock: deps.clock,
      egress: deps.egress,
    });
    return {
      status: 'linked',
      auth: { kind: 'bearer', credential: config.credential },
      catalog: keptCatalog(catalog),
    };
  }
  const context = linkContext(deps, config);
  const link = { ...ref, endpoint: config.endpoint, returnTo: config.return_to };
  const outcome =
    purpose === 'fresh' ? await freshAuthorizeUrl(context, link) : await beginLink(context, link);
  return resultOf(context.store, ref, outcome);
}

async function exchange(
  deps: ConnectionEffectDeps,
  ref: ConnectionRef,
  { config, code, state }: AuthorizerInput,
): Promise<LinkResult> {
  const context = linkContext(deps, config);
  const finished = await finishLink(context, { code, state });
  // The edge peeked this state for this connection; a handle is never taken for another.
  if (finished.tenant !== ref.tenant || finished.connection !== ref.connection) {
    throw new InvalidRequest('invalid_state', 'the authorization is for another connection', {
      field: 'query.state',
      reason: 'names another connection',
    });
  }
  return resultOf(context.store, ref, finished);
}

/**
 * The connection machine with its real effects, for the connection `ref`. Each probe's
 * promise also goes to `effect` (the host's `EffectSink`): the machine takes its answer as
 * a done or error event, and the host fails the command with the probe's own error, so a
 * failed probe commits nothing (§7 "nothing changed").
 */
export function connectionLogic(
  deps: ConnectionEffectDeps,
  ref: ConnectionRef,
  effect: EffectSink,
) {
  const reported = (work: Promise<LinkResult>): Promise<LinkResult> => {
    effect(work);
    return work;
  };
  return connectionMachine.provide({
    actors: {
      catalogReader: fromPromise<LinkResult, CatalogReaderInput>(({ input }) =>
        reported(readCatalog(deps, ref, input)),
      ),
      authorizer: fromPromise<LinkResult, AuthorizerInput>(({ input }) =>
        reported(exchange(deps, ref, input)),
      ),
    },
  });
}
