/**
 * Builds the real app for a test: real stores (SQLite in a temp folder by default, or the
 * PostgreSQL/Redis servers), real keys, a captured log. Tests call `app.inject()` or
 * `listen()` on port 0. On PostgreSQL each app has a schema of its own
 * (`database-schema.ts`), shared only with its second instances.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createApp, type AppDeps } from '../../src/app.ts';
import { loadKeyMaterial, type KeyMaterial } from '../../src/auth/key-material.ts';
import { TokenService } from '../../src/auth/tokens.ts';
import { systemClock, systemEntropy, type Clock } from '../../src/clock.ts';
import { TAIL_LIMITS, type TailLimits } from '../../src/http/tails/limits.ts';
import { HTTP_TIMEOUTS, type HttpTimeouts } from '../../src/http/timeouts.ts';
import { createLogger } from '../../src/logger.ts';
import type { RateLimits } from '../../src/http/rate-limit.ts';
import { parseAllowList } from '../../src/net/addresses.ts';
import type { TrustProxy } from '../../src/net/proxies.ts';
import { buildServices, type Services } from '../../src/services.ts';
import { openStores, type Stores } from '../../src/storage/open.ts';
import { LOOPBACK_PEERS } from './egress.ts';
import { ownSchema } from './database-schema.ts';
import { captureLog, type LogCapture } from './log-capture.ts';

export interface TestAppOptions {
  /** Extra routes registered before the app is ready (probe routes of a test). */
  readonly routes?: (app: FastifyInstance) => void;
  readonly bodyLimit?: number;
  /** Limits of route families; by default far above what any test sends. */
  readonly rateLimits?: Partial<RateLimits>;
  /** `TRUST_PROXY`; off by default, as in the service. */
  readonly trustProxy?: TrustProxy;
  readonly appdocBodyLimit?: number;
  /** How long ended proposals are kept (ms); the service's default when absent. */
  readonly proposalRetentionMs?: number;
  readonly clock?: Clock;
  readonly databaseUrl?: string;
  readonly redisUrl?: string;
  readonly consoleOidc?: AppDeps['consoleOidc'];
  /** `OPERATOR_GRANT`; absent, on only without `consoleOidc`, as in the service. */
  readonly operatorGrant?: boolean;
  /** Turn runtime settings; by default a short sweep, the usual lease and idle archive. */
  readonly turns?: Partial<AppDeps['turns']>;
  /**
   * `EGRESS_ALLOW` as the environment spells it. By default loopback (`LOOPBACK_PEERS`),
   * where every MCP peer of the tests listens; `''` gives the production default, which
   * refuses them.
   */
  readonly egressAllow?: string;
  /**
   * Inference providers by name; the service's (the simulated one) when absent. `{}` is a
   * build with none: options still validate, but no turn runs (see `LOG_ONLY`).
   */
  readonly providers?: AppDeps['providers'];
  /** HTTP timeouts; the service's defaults when absent. */
  readonly http?: Partial<HttpTimeouts>;
  /** Tail caps, buffers and heartbeat; the service's defaults when absent. */
  readonly tailLimits?: Partial<TailLimits>;
  /** `METRICS_TOKEN`; absent, `GET /metrics` answers loopback scrapers only. */
  readonly metricsToken?: string;
  /**
   * `BASE_URL`; `http://127.0.0.1` when absent. A test whose browser must come back to the
   * service (an OAuth callback) names the address it will listen at.
   */
  readonly baseUrl?: string;
}

/**
 * A service whose build has no inference provider: sessions are their logs alone, and a
 * `message.submitted` starts no turn. For tests of the log itself (appends, cursors,
 * tails), whose records a turn would interleave with.
 */
/** How long a test app's close waits for its connections before dropping them. */
const CLOSE_GRACE_MS = 3_000;

export const LOG_ONLY: TestAppOptions = { providers: {} };

export interface TestApp {
  readonly app: FastifyInstance;
  readonly deps: AppDeps;
  /** The app's services: the one actor host, directory, OAuth store, … it routes to. */
  readonly services: Services;
  readonly stores: Stores;
  readonly keys: KeyMaterial;
  readonly logs: LogCapture;
  readonly dataDir: string;
  /** The URL of the app's own schema on PostgreSQL (`database-schema.ts`), if it runs there. */
  readonly databaseUrl: string | undefined;
  readonly bodyLimit: number;
  /** What the app was started with. */
  readonly options: TestAppOptions;
  /** Ends tails, closes the app and the stores, removes the data folder. */
  close(): Promise<void>;
}

/** Limits no test reaches unless it asks for lower ones. */
const GENEROUS_LIMITS: RateLimits = {
  appends: { max: 10_000, windowMs: 1000 },
  sessions: { max: 10_000, windowMs: 1000 },
  tails: { max: 10_000, windowMs: 1000 },
  console: { max: 10_000, windowMs: 1000 },
  open: { max: 10_000, windowMs: 1000 },
  appdoc: { max: 10_000, windowMs: 60_000 },
};

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-'));
  const clock = options.clock ?? systemClock;
  const keys = await loadKeyMaterial({
    dataDir,
    signingKeyPem: undefined,
    secretsKey: undefined,
    operatorToken: undefined,
  });
  const schema = options.databaseUrl === undefined ? null : await ownSchema(options.databaseUrl);
  const stores = await openStores({
    dataDir,
    databaseUrl: schema?.url,
    redisUrl: options.redisUrl,
    secretsKey: keys.secretsKey,
    clock,
  }).catch(async (error: unknown) => {
    await schema?.drop();
    throw error;
  });
  const logs = captureLog();
  const shutdown = new AbortController();
  const bodyLimit = options.bodyLimit ?? 64 * 1024;
  const deps: AppDeps = {
    baseUrl: options.baseUrl ?? 'http://127.0.0.1',
    bodyLimit,
    rateLimits: { ...GENEROUS_LIMITS, ...options.rateLimits },
    // With Redis the limits count there, as in a deployment with REDIS_URL.
    rateLimitRedis: stores.redis,
    trustProxy: options.trustProxy,
    ...(options.appdocBodyLimit === undefined ? {} : { appdocBodyLimit: options.appdocBodyLimit }),
    proposalRetentionMs: options.proposalRetentionMs,
    logger: createLogger({ level: 'info', destination: logs.stream }),
    logStore: stores.log,
    controlStore: stores.control,
    workStore: stores.work,
    turns: { leaseMs: 10_000, sweepMs: 200, idleArchiveMs: 7 * 86_400_000, ...options.turns },
    tokens: new TokenService(keys.signing, 'http://127.0.0.1', clock),
    clock,
    entropy: systemEntropy,
    operatorTokenHash: keys.operatorTokenHash,
    ...(options.operatorGrant === undefined ? {} : { operatorGrant: options.operatorGrant }),
    consoleOidc: options.consoleOidc,
    shutdown: shutdown.signal,
    sealKey: keys.secretsKey,
    egressAllow: parseAllowList(options.egressAllow ?? LOOPBACK_PEERS),
    ...(options.providers === undefined ? {} : { providers: options.providers }),
    http: { ...HTTP_TIMEOUTS, ...options.http },
    tailLimits: { ...TAIL_LIMITS, ...options.tailLimits },
    metricsToken: options.metricsToken,
  };
  const services = buildServices(deps);
  const app = await createApp(deps, services);
  options.routes?.(app);
  await app.ready();
  return {
    app,
    deps,
    services,
    stores,
    keys,
    logs,
    dataDir,
    databaseUrl: schema?.url,
    bodyLimit,
    options,
    close: async () => {
      shutdown.abort();
      // Closing waits for every connection. One a client opened and has not sent a request
      // on yet (a pooled spare) is not idle to Node, so it would hold the close until the
      // headers timeout: a test's app drops what is left after a short grace.
      const force = setTimeout(() => {
        app.server.closeAllConnections();
      }, CLOSE_GRACE_MS);
      await app.close();
      clearTimeout(force);
      await stores.close();
      await schema?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A second instance of a test app's service: another process on the same stores. */
export interface SecondInstance {
  readonly app: FastifyInstance;
  /** Its own connections to the stores the first instance runs on. */
  readonly stores: Stores;
  close(): Promise<void>;
}

/**
 * Starts another instance of `first`'s service on the same stores, as a second process
 * would run: its own store connections, actor host and caches; the same key material.
 * SQLite is shared through `first`'s data folder.
 */
export async function startSecondInstance(first: TestApp): Promise<SecondInstance> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-b-'));
  const stores = await openStores({
    dataDir: first.databaseUrl === undefined ? first.dataDir : dataDir,
    databaseUrl: first.databaseUrl,
    redisUrl: first.options.redisUrl,
    secretsKey: first.keys.secretsKey,
    clock: first.deps.clock,
  });
  const app = await createApp({
    ...first.deps,
    logStore: stores.log,
    controlStore: stores.control,
    workStore: stores.work,
  });
  await app.ready();
  return {
    app,
    stores,
    close: async () => {
      await app.close();
      await stores.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
