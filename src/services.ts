/**
 * The composition root (STYLE "Our layout"): every service of one process, built once
 * over the ports `src/main.ts` (or a test) opens. The app's route plugins receive what
 * they need from here and construct nothing themselves, so a process holds one actor host
 * (sessions, proposals and connections all run in it, one mailbox per actor id), one
 * OAuth state store, one session directory and one session-token cache.
 *
 * `buildServices` starts nothing but the host's idle sweep (an unref'd timer); the app
 * starts the turn runtime once it is ready. `close()` stops the turn drivers, then the
 * host once the commands under way finish, so the app closes the services before the
 * stores close.
 */
import type { BlockList } from 'node:net';
import { ActorHost } from './actors/actor-host.ts';
import type { FastifyBaseLogger } from 'fastify';
import type { TokenService } from './auth/tokens.ts';
import type { Clock, Entropy } from './clock.ts';
import { ConnectionAuthorization } from './connections/authorization.ts';
import { ControlOAuthStore } from './connections/oauth-store.ts';
import { ConnectionService } from './connections/service.ts';
import type { InstallHooks } from './consent/installs.ts';
import { ProposalFlow } from './consent/proposals.ts';
import { OidcVerifier } from './console/oidc.ts';
import { archiveSessionsOf } from './sessions/archive-install.ts';
import { SessionDirectory } from './sessions/directory.ts';
import { deriveSessionIdKey } from './sessions/ids.ts';
import { SessionLifecycle } from './sessions/lifecycle.ts';
import { SessionTokens } from './sessions/tokens.ts';
import { TokenStanding } from './sessions/token-standing.ts';
import type { ControlStore } from './storage/control-store.ts';
import type { LogStore } from './storage/log-store.ts';
import type { SecretsKeyring } from './storage/secret-box.ts';
import type { WorkStore } from './storage/work-store.ts';
import type { InferenceProvider } from './inference/provider.ts';
import { SimulatedProvider } from './inference/simulated.ts';
import { TurnRuntime } from './turns/runtime.ts';
import { Egress } from './net/egress.ts';
import { signGate } from './gate/gate.ts';
import { ExecutorAccess } from './sessions/executors.ts';
import { ConnectionToolCaller } from './connections/tool-calls.ts';
import { RetentionSweep } from './resources/retention.ts';
import { ServiceMetrics } from './metrics/service-metrics.ts';

/** What the services are built from: the ports and the configuration they read. */
export interface ServicesDeps {
  /** `BASE_URL` (decisions row 1): consent URLs, the OAuth callback, `Link` headers. */
  readonly baseUrl: string;
  readonly logStore: LogStore;
  readonly controlStore: ControlStore;
  /** Leases and due times of the turn runtime, and usage checkpoints. */
  readonly workStore: WorkStore;
  readonly logger: FastifyBaseLogger;
  /**
   * How turns are driven: `LEASE_MS`, `TURN_SWEEP_MS`, `TURN_LINGER_MS` (the runtime's
   * default when absent), `SESSION_IDLE_ARCHIVE` (ms).
   */
  readonly turns: {
    readonly leaseMs: number;
    readonly sweepMs: number;
    readonly lingerMs?: number;
    readonly idleArchiveMs: number;
  };
  /** Providers by the `provider` of an inference option; the simulated one by default. */
  readonly providers?: Readonly<Record<string, InferenceProvider>> | undefined;
  /** Signs and verifies console, install and session tokens. */
  readonly tokens: TokenService;
  readonly clock: Clock;
  /** Randomness for ids, keys and secrets (injected so tests can reproduce ids). */
  readonly entropy: Entropy;
  /**
   * 32 bytes the per-tenant keys of sealed record layers, the session-id key and the OAuth
   * callback binding derive from, each under its own HKDF label: the first secrets key,
   * which rotation keeps (session logs and ids are never rewritten).
   */
  readonly sealKey: Buffer;
  /**
   * The secrets keys that seal the connections' OAuth state: the current one seals, every
   * one opens. Absent: `sealKey` alone.
   */
  readonly secretsKeyring?: SecretsKeyring | undefined;
  /** The OpenID Connect issuer console ID tokens come from, when one is configured. */
  readonly consoleOidc:
    | {
        readonly issuer: string;
        readonly audience: string | undefined;
        /** The only algorithms an ID token may be signed with. */
        readonly algorithms?: readonly string[] | undefined;
      }
    | undefined;
  /** Origins besides `baseUrl`'s a connection's `return_to` may point at (decisions row 44). */
  readonly connectionReturnOrigins?: readonly string[] | undefined;
  /** `EGRESS_ALLOW`: refused addresses tenant-supplied URLs may reach anyway (none by default). */
  readonly egressAllow?: BlockList | undefined;
  /** `PROPOSAL_RETENTION`: how long an ended proposal is kept (ms; a day by default). */
  readonly proposalRetentionMs?: number | undefined;
  /** Whether `GET /metrics` also carries the process's own metrics (the service: yes). */
  readonly processMetrics?: boolean | undefined;
}

/** Every service of one process, each built once. */
export interface Services {
  /** The one actor host: every session, proposal and connection actor runs in it. */
  readonly host: ActorHost;
  /** The HMAC key of session ids (decisions row 5, `deriveSessionIdKey`). */
  readonly sessionIdKey: Buffer;
  /** Mints and verifies session tokens, with the one cache of verified tokens. */
  readonly sessionTokens: SessionTokens;
  readonly directory: SessionDirectory;
  /** Opens and archives sessions through the session actor. */
  readonly lifecycle: SessionLifecycle;
  /** Drives the sessions' turns; `start()` begins its sweep. */
  readonly turns: TurnRuntime;
  /** Executor token exchange and claims (each claim an actor of the host). */
  readonly executors: ExecutorAccess;
  /** The connections' OAuth state (clients, tokens, pending authorizations), sealed. */
  readonly oauth: ControlOAuthStore;
  readonly connections: ConnectionService;
  /** The OAuth side of connections: fresh URLs, the callback, refused tokens. */
  readonly authorization: ConnectionAuthorization;
  /** The vendor flow's proposals, each an actor of the host. */
  readonly proposals: ProposalFlow;
  /** What a deleted install takes with it: its sessions (decisions rows 61, 76). */
  readonly installHooks: InstallHooks;
  /** Verifies console ID tokens; undefined without `CONSOLE_OIDC_ISSUER`. */
  readonly oidc: OidcVerifier | undefined;
  /** Deletes expired resources (ended proposals); `start()` begins its timer. */
  readonly retention: RetentionSweep;
  /** What `GET /metrics` serves; the routes and the turn runtime feed it. */
  readonly metrics: ServiceMetrics;
  /** Stops the turn drivers, then refuses new commands, waits for those under way and passivates every actor. */
  close(): Promise<void>;
}

/** Builds every service over `deps`; nothing listens and nothing is read yet. */
export function buildServices(deps: ServicesDeps): Services {
  const { baseUrl, controlStore, clock, entropy } = deps;
  const host = new ActorHost({ store: controlStore, clock, sweepEveryMs: 60_000 });
  const sessionIdKey = deriveSessionIdKey(deps.sealKey);
  // Live counts are read when scraped, from the host and the runtime built below.
  const metrics = new ServiceMetrics({
    backend: deps.logStore.backend,
    processMetrics: deps.processMetrics ?? false,
    liveActors: () => host.stats().activeByType,
    liveDrivers: () => turns.driving,
    liveSessionStates: () => turns.statesHeld,
  });
  const directory = new SessionDirectory(controlStore);
  // A session token ends with the install key, install or membership it
  // was minted under.
  const sessionTokens = new SessionTokens({
    tokens: deps.tokens,
    clock,
    entropy,
    standing: new TokenStanding({ control: controlStore, directory, clock }),
  });
  const oauth = new ControlOAuthStore(controlStore, deps.secretsKeyring ?? deps.sealKey, clock);
  const egress = new Egress({ allow: deps.egressAllow, log: deps.logger });
  const catalogs = {
    controlStore,
    clock,
    entropy,
    baseUrl,
    oauthStates: (endpoint: string) => oauth.forEndpoint(endpoint),
    egress,
  };
  const toolCalls = new ConnectionToolCaller(catalogs);
  // The runtime archives idle sessions through the lifecycle, whose archive ends the turn
  // in flight through the runtime: the lifecycle calls it through `turns`, built below
  // (the call comes only once the services are built).
  const lifecycle = new SessionLifecycle({
    host,
    logStore: deps.logStore,
    directory,
    tokens: sessionTokens,
    entropy,
    idKey: sessionIdKey,
    catalogs,
    turns: {
      opening: (session) => turns.opening(session),
      endForArchive: (session) => turns.endForArchive(session),
      archived: (session) => {
        turns.archived(session);
      },
    },
  });
  const turns: TurnRuntime = new TurnRuntime({
    log: deps.logStore,
    control: controlStore,
    work: deps.workStore,
    directory,
    clock,
    logger: deps.logger,
    sealKey: deps.sealKey,
    providers: deps.providers ?? { simulated: new SimulatedProvider() },
    ...deps.turns,
    archiveIdle: (session) => lifecycle.archive(session, { by: 'idle' }),
    signGate: (claims) => signGate(deps.tokens.signingKey, claims, clock.now()),
    callTool: (request) => toolCalls.call(request),
    turnEnded: (reason, seconds) => {
      metrics.turnEnded(reason, seconds);
    },
    admitted: (how) => {
      metrics.admitted(how);
    },
  });
  const effects = {
    egress,
    control: controlStore,
    oauth,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    clock,
    entropy,
  };
  const connections = new ConnectionService({
    ...effects,
    host,
    ...(deps.connectionReturnOrigins === undefined
      ? {}
      : { returnOrigins: deps.connectionReturnOrigins }),
  });
  // Without CONSOLE_OIDC_AUDIENCE the ID tokens must be issued to this service's own base
  // URL: the audience is always checked, so a token minted for another client of the same
  // issuer never signs anyone in here.
  const oidc =
    deps.consoleOidc === undefined
      ? undefined
      : new OidcVerifier({
          issuer: deps.consoleOidc.issuer,
          audience: deps.consoleOidc.audience ?? baseUrl,
          ...(deps.consoleOidc.algorithms === undefined
            ? {}
            : { algorithms: deps.consoleOidc.algorithms }),
          clock,
        });
  const retention = new RetentionSweep({ store: controlStore, clock, logger: deps.logger });
  return {
    host,
    sessionIdKey,
    sessionTokens,
    directory,
    lifecycle,
    turns,
    executors: new ExecutorAccess({
      log: deps.logStore,
      host,
      tokens: sessionTokens,
      directory,
      work: deps.workStore,
      clock,
      baseUrl: baseUrl.replace(/\/+$/, ''),
    }),
    oauth,
    connections,
    authorization: new ConnectionAuthorization(effects, connections),
    proposals: new ProposalFlow({
      host,
      store: controlStore,
      clock,
      entropy,
      baseUrl,
      ...(deps.proposalRetentionMs === undefined ? {} : { retentionMs: deps.proposalRetentionMs }),
    }),
    installHooks: {
      deleted: (install) => {
        sessionTokens.forgetInstall(install.id);
        return archiveSessionsOf(install.id, directory, lifecycle);
      },
      keyChanged: (install) => {
        sessionTokens.forgetInstall(install);
      },
    },
    oidc,
    retention,
    metrics,
    close: async () => {
      await retention.close();
      await turns.close();
      await host.close();
    },
  };
}
