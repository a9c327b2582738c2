/**
 * The service's configuration: one zod schema over the environment.
 *
 * Only `src/main.ts` reads `process.env`; it hands the environment to `parseConfig`,
 * which either answers a typed `Config` or throws a `ConfigError` naming the variable
 * and why, so start-up stops with one clear line.
 */
import type { BlockList } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import {
  LOG_LEVELS,
  algorithmList,
  base64Keys,
  bearerToken,
  cidrList,
  optional,
  port,
  positiveInt,
  redisUrl,
  span,
  trustProxy,
  url,
} from './config-values.ts';
import type { RateLimits } from './http/rate-limit.ts';
import { parseAllowList } from './net/addresses.ts';
import type { TrustProxy } from './net/proxies.ts';
import type { HttpTimeouts } from './http/timeouts.ts';
import type { TailLimits } from './http/tails/limits.ts';

/** Every environment variable the service reads, with its default. */
export const configSchema = z.object({
  PORT: optional(port).default(8080),
  HOST: optional(z.string().min(1)).default('127.0.0.1'),
  BASE_URL: optional(url(['http:', 'https:'])),
  DATA_DIR: optional(z.string().min(1)).default('./data'),
  DATABASE_URL: optional(url(['postgres:', 'postgresql:'])),
  REDIS_URL: optional(redisUrl),
  LOG_LEVEL: optional(
    z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }),
  ).default('info'),
  OPERATOR_TOKEN: optional(bearerToken),
  METRICS_TOKEN: optional(bearerToken),
  CONSOLE_OIDC_ISSUER: optional(url(['http:', 'https:'])),
  CONSOLE_OIDC_AUDIENCE: optional(z.string().min(1)),
  CONSOLE_OIDC_ALGORITHMS: optional(algorithmList),
  OPERATOR_GRANT: optional(z.enum(['on', 'off'], { error: 'must be on or off' })),
  SIGNING_KEY: optional(z.string().min(1)),
  SECRETS_KEY: optional(base64Keys),
  BODY_LIMIT: optional(positiveInt).default(1024 * 1024),
  RATE_LIMIT_PER_SECOND: optional(positiveInt).default(100),
  TAIL_RATE_LIMIT_PER_SECOND: optional(positiveInt).default(100),
  CONSOLE_RATE_LIMIT_PER_SECOND: optional(positiveInt).default(50),
  OPEN_RATE_LIMIT_PER_SECOND: optional(positiveInt).default(20),
  APPDOC_RATE_LIMIT_PER_MINUTE: optional(positiveInt).default(10),
  TRUST_PROXY: optional(trustProxy).default(false),
  APPDOC_BODY_LIMIT: optional(positiveInt).default(256 * 1024),
  PROPOSAL_RETENTION: optional(span).default(86_400_000),
  SHUTDOWN_GRACE_MS: optional(positiveInt).default(10_000),
  LEASE_MS: optional(positiveInt).default(10_000),
  TURN_SWEEP_MS: optional(positiveInt).default(1_000),
  TURN_LINGER_MS: optional(positiveInt).default(2_000),
  SESSION_IDLE_ARCHIVE: optional(span).default(7 * 86_400_000),
  EGRESS_ALLOW: optional(cidrList),
  // Slow and greedy clients.
  HTTP_HEADERS_TIMEOUT: optional(span).default(10_000),
  HTTP_REQUEST_TIMEOUT: optional(span).default(30_000),
  HTTP_CONNECTION_TIMEOUT: optional(span).default(60_000),
  HTTP_KEEP_ALIVE_TIMEOUT: optional(span).default(72_000),
  TAILS_PER_CREDENTIAL: optional(positiveInt).default(50),
  TAILS_PER_SESSION: optional(positiveInt).default(1_000),
  TAIL_BUFFER_BYTES: optional(positiveInt).default(256 * 1024),
  TAIL_LAG_TIMEOUT: optional(span).default(5_000),
  WS_PING_INTERVAL: optional(span).default(30_000),
  WS_PONG_TIMEOUT: optional(span).default(10_000),
  // OpenTelemetry traces, off unless a collector is named: with none to receive them, no
  // SDK is loaded and nothing is wrapped.
  OTEL_EXPORTER_OTLP_ENDPOINT: optional(url(['http:', 'https:'])),
  OTEL_SERVICE_NAME: optional(z.string().min(1)),
});

/** The parsed configuration, with paths made absolute and `BASE_URL` defaulted. */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly baseUrl: string;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly redisUrl: string | undefined;
  readonly logLevel: (typeof LOG_LEVELS)[number];
  readonly operatorToken: string | undefined;
  /** The bearer `GET /metrics` asks for; absent, it answers loopback scrapers only. */
  readonly metricsToken: string | undefined;
  readonly consoleOidcIssuer: string | undefined;
  readonly consoleOidcAudience: string | undefined;
  /** The algorithms an ID token may be signed with; the verifier's default when absent. */
  readonly consoleOidcAlgorithms: readonly string[] | undefined;
  /**
   * Whether the operator grant mints console tokens: `OPERATOR_GRANT`, or else only while
   * no `CONSOLE_OIDC_ISSUER` is set.
   */
  readonly operatorGrant: boolean;
  /** A PKCS#8 PEM Ed25519 private key; absent: generated into `DATA_DIR`. */
  readonly signingKey: string | undefined;
  /**
   * 32 bytes, base64url, for secrets at rest, or a ring of such keys newest first,
   * comma-separated; absent: generated into `DATA_DIR`.
   */
  readonly secretsKey: string | undefined;
  readonly bodyLimit: number;
  /** Requests per bucket per window of each route family (`src/http/rate-limit.ts`). */
  readonly rateLimits: RateLimits;
  /** Which proxies' `X-Forwarded-For` names the client: the address rate limits key on. */
  readonly trustProxy: TrustProxy;
  /** Largest body of the unauthenticated `POST /appdoc`, in bytes (413 above it). */
  readonly appdocBodyLimit: number;
  /** How long an ended proposal is kept after its ten minutes, in ms. */
  readonly proposalRetentionMs: number;
  readonly shutdownGraceMs: number;
  /** How long a turn driver's lease on a session lasts without renewal (ms). */
  readonly leaseMs: number;
  /** How often each process looks for sessions whose turn work is due (ms). */
  readonly turnSweepMs: number;
  /** How long a turn driver stays, lease held, after its last work (ms). */
  readonly turnLingerMs: number;
  /** Row 61: a live session idle this long is archived (ms). */
  readonly sessionIdleArchiveMs: number;
  /**
   * Addresses outbound requests to tenant-supplied URLs may reach although the egress
   * guard refuses their class (loopback, private, link-local…); empty by default.
   */
  readonly egressAllow: BlockList;
  /** How long clients may take over requests, and idle connections stay. */
  readonly http: HttpTimeouts;
  /** Caps, buffers and liveness of the session tails. */
  readonly tails: TailLimits;
  /** Where traces go (`src/telemetry/`); undefined: tracing is off. */
  readonly telemetry: { readonly endpoint: string; readonly serviceName?: string } | undefined;
}

/** Start-up refused: `variable` is the environment variable at fault. */
export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, reason: string) {
    super(`${variable}: ${reason}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

/** Parses the environment; throws `ConfigError` on the first bad variable. */
export function parseConfig(
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = typeof issue?.path[0] === 'string' ? issue.path[0] : 'environment';
    throw new ConfigError(variable, issue?.message ?? 'is invalid');
  }
  const c = parsed.data;
  // Node refuses a server whose headers may take longer than the whole request.
  if (c.HTTP_HEADERS_TIMEOUT > c.HTTP_REQUEST_TIMEOUT) {
    throw new ConfigError('HTTP_HEADERS_TIMEOUT', 'must not be longer than HTTP_REQUEST_TIMEOUT');
  }
  const publicHost = c.HOST === '0.0.0.0' || c.HOST === '::' ? '127.0.0.1' : c.HOST;
  return {
    port: c.PORT,
    host: c.HOST,
    baseUrl: (c.BASE_URL ?? `http://${publicHost}:${c.PORT}`).replace(/\/+$/, ''),
    dataDir: path.resolve(cwd, c.DATA_DIR),
    databaseUrl: c.DATABASE_URL,
    redisUrl: c.REDIS_URL,
    logLevel: c.LOG_LEVEL,
    operatorToken: c.OPERATOR_TOKEN,
    metricsToken: c.METRICS_TOKEN,
    consoleOidcIssuer: c.CONSOLE_OIDC_ISSUER,
    consoleOidcAudience: c.CONSOLE_OIDC_AUDIENCE,
    consoleOidcAlgorithms: c.CONSOLE_OIDC_ALGORITHMS,
    operatorGrant:
      c.OPERATOR_GRANT === undefined
        ? c.CONSOLE_OIDC_ISSUER === undefined
        : c.OPERATOR_GRANT === 'on',
    signingKey: c.SIGNING_KEY,
    secretsKey: c.SECRETS_KEY,
    bodyLimit: c.BODY_LIMIT,
    rateLimits: {
      appends: { max: c.RATE_LIMIT_PER_SECOND, windowMs: 1000 },
      sessions: { max: c.RATE_LIMIT_PER_SECOND, windowMs: 1000 },
      tails: { max: c.TAIL_RATE_LIMIT_PER_SECOND, windowMs: 1000 },
      console: { max: c.CONSOLE_RATE_LIMIT_PER_SECOND, windowMs: 1000 },
      open: { max: c.OPEN_RATE_LIMIT_PER_SECOND, windowMs: 1000 },
      appdoc: { max: c.APPDOC_RATE_LIMIT_PER_MINUTE, windowMs: 60_000 },
    },
    trustProxy: c.TRUST_PROXY,
    appdocBodyLimit: c.APPDOC_BODY_LIMIT,
    proposalRetentionMs: c.PROPOSAL_RETENTION,
    shutdownGraceMs: c.SHUTDOWN_GRACE_MS,
    leaseMs: c.LEASE_MS,
    turnSweepMs: c.TURN_SWEEP_MS,
    turnLingerMs: c.TURN_LINGER_MS,
    sessionIdleArchiveMs: c.SESSION_IDLE_ARCHIVE,
    egressAllow: c.EGRESS_ALLOW ?? parseAllowList(''),
    http: {
      headersMs: c.HTTP_HEADERS_TIMEOUT,
      requestMs: c.HTTP_REQUEST_TIMEOUT,
      connectionMs: c.HTTP_CONNECTION_TIMEOUT,
      keepAliveMs: c.HTTP_KEEP_ALIVE_TIMEOUT,
    },
    tails: {
      perCredential: c.TAILS_PER_CREDENTIAL,
      perSession: c.TAILS_PER_SESSION,
      bufferBytes: c.TAIL_BUFFER_BYTES,
      lagMs: c.TAIL_LAG_TIMEOUT,
      pingIntervalMs: c.WS_PING_INTERVAL,
      pongTimeoutMs: c.WS_PONG_TIMEOUT,
    },
    telemetry:
      c.OTEL_EXPORTER_OTLP_ENDPOINT === undefined
        ? undefined
        : { endpoint: c.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: c.OTEL_SERVICE_NAME },
  };
}
