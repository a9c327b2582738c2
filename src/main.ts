/**
 * The process entry point: reads the environment once, builds the ports, listens, and
 * shuts down gracefully on SIGTERM and SIGINT. The only file that reads `process.env`
 * or exits.
 */
import { mkdir } from 'node:fs/promises';
import { flushCompileCache, getCompileCacheDir } from 'node:module';
import { createContext } from 'node:vm';
import { buildApp, type AppDeps } from './app.ts';
import { loadKeyMaterial } from './auth/key-material.ts';
import { TokenService } from './auth/tokens.ts';
import { systemClock, systemEntropy } from './clock.ts';
import { ConfigError, parseConfig } from './config.ts';
import { SimulatedProvider } from './inference/simulated.ts';
import { createLogger } from './logger.ts';
import { readyLine } from './ready-line.ts';
import { buildServices } from './services.ts';
import { openStores } from './storage/open.ts';
import { startTelemetry } from './telemetry/start.ts';
import { traceProviders } from './telemetry/traced-inference.ts';
import { traceStores } from './telemetry/traced-stores.ts';

async function main(): Promise<void> {
  let config;
  try {
    config = parseConfig(process.env, process.cwd());
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`start-up refused: ${error.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }

  const logger = createLogger({ level: config.logLevel });
  // Owner only: the folder holds the keys and the embedded database.
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const keys = await loadKeyMaterial({
    dataDir: config.dataDir,
    signingKeyPem: config.signingKey,
    secretsKey: config.secretsKey,
    operatorToken: config.operatorToken,
  });
  if (keys.generatedOperatorToken !== undefined && config.operatorGrant) {
    // Decisions row 73: generated at first start and shown this once; only its hash is kept.
    process.stderr.write(
      `\nOperator token (shown once, keep it safe): ${keys.generatedOperatorToken}\n\n`,
    );
  }

  // Tracing is off (no SDK loaded, nothing wrapped) unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
  const telemetry = await startTelemetry(config.telemetry, (message) => {
    logger.warn(message);
  });
  const opened = await openStores({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    redisUrl: config.redisUrl,
    secretsKey: keys.secretsKeyring,
    clock: systemClock,
  });
  const stores = traceStores(opened, telemetry.tracer);
  const shutdown = new AbortController();
  const deps: AppDeps = {
    baseUrl: config.baseUrl,
    bodyLimit: config.bodyLimit,
    rateLimits: config.rateLimits,
    // With REDIS_URL every process counts against the same limits.
    rateLimitRedis: stores.redis,
    trustProxy: config.trustProxy,
    appdocBodyLimit: config.appdocBodyLimit,
    proposalRetentionMs: config.proposalRetentionMs,
    logger,
    logStore: stores.log,
    controlStore: stores.control,
    workStore: stores.work,
    turns: {
      leaseMs: config.leaseMs,
      sweepMs: config.turnSweepMs,
      lingerMs: config.turnLingerMs,
      idleArchiveMs: config.sessionIdleArchiveMs,
    },
    tokens: new TokenService(keys.signing, config.baseUrl, systemClock),
    clock: systemClock,
    entropy: systemEntropy,
    operatorTokenHash: keys.operatorTokenHash,
    operatorGrant: config.operatorGrant,
    consoleOidc:
      config.consoleOidcIssuer === undefined
        ? undefined
        : {
            issuer: config.consoleOidcIssuer,
            audience: config.consoleOidcAudience,
            algorithms: config.consoleOidcAlgorithms,
          },
    shutdown: shutdown.signal,
    sealKey: keys.secretsKey,
    secretsKeyring: keys.secretsKeyring,
    egressAllow: config.egressAllow,
    http: config.http,
    tailLimits: config.tails,
    metricsToken: config.metricsToken,
    processMetrics: true,
    tracer: telemetry.tracer,
    // The services' default provider, with a span per inference step when tracing.
    providers: traceProviders({ simulated: new SimulatedProvider() }, telemetry.tracer),
  };
  // The composition root: every service once, over the stores; the app closes them.
  const app = await buildApp(deps, buildServices(deps));

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error({ graceMs: config.shutdownGraceMs }, 'shutdown grace elapsed; exiting');
      process.exit(1);
    }, config.shutdownGraceMs);
    force.unref();
    // Tails end first (they are requests that never finish by themselves), then the server
    // stops accepting and drains in-flight requests, then the stores close, then the spans
    // still queued are exported.
    shutdown.abort();
    app
      .close()
      .then(() => stores.close())
      .then(() => telemetry.shutdown())
      .then(() => {
        logger.info('stopped');
        logger.flush();
        process.exit(0);
      })
      .catch((error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  await app.listen({ port: config.port, host: config.host });
  // Arms V8's memory reducer once (docs/benchmarks.md, "Idle"): V8 starts it when a context
  // is disposed of or a full collection grew the heap, and start-up leaves the heap grown
  // with neither to come, so the young generation and the pages start-up freed stayed
  // resident (159 MB idle). An empty context, left to the collector, is disposed of; once
  // the process is quiet the reducer's collections hand those pages back (about 139 MB).
  createContext();
  // What start-up compiled goes to the compile cache now (`src/compile-cache.js`), not only
  // at a clean exit: a service that is killed still starts warm next time.
  flushCompileCache();
  logger.info(
    {
      url: config.baseUrl,
      log: stores.log.backend,
      control: stores.control.backend,
      // Null when the cache is off: its folder could not be written, or it was turned off.
      compileCache: getCompileCacheDir() ?? null,
    },
    'listening',
  );
  const backends = [...new Set([stores.control.backend, stores.log.backend])].join(' + ');
  process.stderr.write(
    `${readyLine({
      baseUrl: config.baseUrl,
      dataDir: config.dataDir,
      stores: backends,
      operatorGrant: config.operatorGrant,
      generatedNow: keys.generatedOperatorToken !== undefined,
      configured: config.operatorToken !== undefined,
      issuer: config.consoleOidcIssuer,
    })}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(
    `start-up failed: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
